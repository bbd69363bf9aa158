"""Describing a turn in the mode's terms (issue 28): how long the chat's
per-turn summary takes to compute, for a 50-slide deck and a 2,000-line
document, read from a real checkpoint store.

    python benchmarks/bench_describe.py [--runs 30] [--quick]

For each workspace one turn is recorded through the checkpoint store
(``Checkpoints.record`` → the edits → ``turn_ended``), then described again
and again from a fresh ``StoreTurnFiles`` (as the route does for a ref it
has not cached):

- the slide turn retitles three slides, moves two, rewrites the text of
  five, adds one, removes one and touches the theme;
- the document turn rewrites three sections of a 2,000-line Markdown file,
  adds one and renames one.

Baselines in the same run, on the same checkpoint pair: the per-file
fallback (``describe_files``, what a mode without a describer gets: it
reads no content), and reading the changed files' bytes on both sides
(the least any describer that looks inside the files must do). Also shown:
the describer alone over in-memory maps (no store), the figure its unit
test bounds at 50 ms.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import finish, machine_note, median, row, temp_dir  # noqa: E402

from pneuma.checkpoints import Checkpoints  # noqa: E402
from pneuma.checkpoints.turn_files import StoreTurnFiles, describe_checkpoint  # noqa: E402
from pneuma.host.plugins import get_plugin_manager  # noqa: E402
from pneuma.host.turn_changes import (  # noqa: E402
    ChangeDescriber,
    TurnFilesFromMaps,
    all_describers,
    describe_turn,
)

SLIDES = 50
DOC_LINES = 2000


def _slide_html(i: int, words: str) -> str:
    return (f'<section class="slide">\n  <header class="stack">\n    <p class="eyebrow">Part {i // 10 + 1}</p>\n'
            f"    <h1>Slide number {i}</h1>\n  </header>\n"
            + "".join(f'  <p class="lead">{words} {j} of slide {i}.</p>\n' for j in range(12))
            + '  <ul class="points">\n'
            + "".join(f"    <li>Point {k}: {words}</li>\n" for k in range(8))
            + "  </ul>\n</section>\n")


def deck_turn() -> tuple[dict[str, str], dict[str, str | None]]:
    """A 50-slide deck and one turn's edits over it (None deletes)."""
    entries = [{"file": f"slides/{i:02d}-s.html", "title": f"Slide number {i}"} for i in range(SLIDES)]
    files: dict[str, str] = {e["file"]: _slide_html(i, "The quick brown fox jumps") for i, e in enumerate(entries)}
    files["theme.css"] = ":root { --accent: #2d6cdf; }\n" + ".slide { padding: 64px; }\n" * 40
    files["manifest.json"] = json.dumps({"title": "Deck", "slides": entries}, indent=2) + "\n"
    edits: dict[str, str | None] = {}
    after = [dict(e) for e in entries]
    for i in (3, 17, 30):
        after[i]["title"] = f"Retitled {i}"
    for i in (5, 9, 22, 41, 44):
        edits[entries[i]["file"]] = _slide_html(i, "A slower red fox walks")
    after.insert(10, after.pop(40))
    after.insert(2, after.pop(25))
    gone = after.pop(33)
    edits[gone["file"]] = None
    after.append({"file": "slides/99-new.html", "title": "New slide"})
    edits["slides/99-new.html"] = _slide_html(99, "Brand new")
    edits["theme.css"] = files["theme.css"] + ":root { --accent: #d0342c; }\n"
    edits["manifest.json"] = json.dumps({"title": "Deck", "slides": after}, indent=2) + "\n"
    return files, edits


def doc_turn() -> tuple[dict[str, str], dict[str, str | None]]:
    """A 2,000-line Markdown document in 50 sections and one turn's edits."""
    chapters = []
    for i in range(50):
        body = "".join(f"Line {j} of chapter {i}, with a few more words to read.\n" for j in range(38))
        chapters.append(f"## Chapter {i}\n\n{body}\n")
    text = "# Book\n\n" + "".join(chapters)
    assert text.count("\n") >= DOC_LINES
    after = text
    for i in (4, 21, 37):
        after = after.replace(f"Line 3 of chapter {i},", f"A new third line for chapter {i},")
    after = after.replace("## Chapter 12\n", "## Chapter twelve\n")
    after = after.replace("## Chapter 30\n", "## An added part\n\nWritten this turn.\n\n## Chapter 30\n")
    return {"book.md": text}, {"book.md": after}


def record_turn(root: Path, files: dict[str, str], edits: dict[str, str | None]) -> tuple[Checkpoints, str]:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    store = Checkpoints(root)
    ref = store.record("the turn").ref
    for path, text in edits.items():
        if text is None:
            (root / path).unlink()
        else:
            (root / path).write_text(text, encoding="utf-8")
    store.turn_ended()
    return store, ref


def timed(runs: int, action: Callable[[], object]) -> float:
    """Median wall time of ``action`` in ms (one untimed run first: imports, caches)."""
    action()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return median(samples)


def read_changed(store: Checkpoints, ref: str) -> None:
    files = StoreTurnFiles(store, ref)
    for item in files.changed:
        files.before(item.path)
        files.after(item.path)


def measure(name: str, describer: ChangeDescriber, root: Path, files: dict[str, str],
            edits: dict[str, str | None], runs: int) -> dict[str, float]:
    store, ref = record_turn(root, files, edits)
    turn = describe_checkpoint(store, describer, ref)
    assert turn.source == "mode", turn.warning
    before = {p: t.encode() for p, t in files.items()}
    after = {**before, **{p: t.encode() for p, t in edits.items() if t is not None}}
    for path in [p for p, t in edits.items() if t is None]:
        del after[path]
    maps = TurnFilesFromMaps(before, after)
    got = {
        "mode": timed(runs, lambda: describe_checkpoint(store, describer, ref)),
        "files": timed(runs, lambda: describe_checkpoint(store, None, ref)),
        "read": timed(runs, lambda: read_changed(store, ref)),
        "memory": timed(runs, lambda: describe_turn(describer, maps)),
        "changes": len(turn.changes),
        "changed_files": len(StoreTurnFiles(store, ref).changed),
    }
    print(f"{name}: {got['changes']} changes over {got['changed_files']} file(s); described "
          f"{got['mode']:.2f} ms (per file {got['files']:.2f} ms, reading the changed files "
          f"{got['read']:.2f} ms, the describer alone {got['memory']:.2f} ms)")
    for change in turn.changes[:12]:
        where = change.where if isinstance(change.where, str) else change.where["en"]
        what = change.what if isinstance(change.what, str) else change.what["en"]
        print(f"    {where}: {what}")
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="timed descriptions per workspace")
    parser.add_argument("--quick", action="store_true", help="5 runs per workspace")
    args = parser.parse_args()
    runs = 5 if args.quick else max(1, args.runs)
    print(machine_note())
    describers = all_describers(get_plugin_manager())
    tmp = temp_dir("pneuma-bench-describe-")
    try:
        deck = measure("50-slide deck", describers["slide"], tmp / "deck", *deck_turn(), runs)
        doc = measure("2,000-line document", describers["doc"], tmp / "doc", *doc_turn(), runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for label, got in (("50-slide deck turn", deck), ("2,000-line document turn", doc)):
        rows += [
            row(f"{label}: described in the mode's terms", got["mode"], 100.0, "ms", "lower",
                got["files"], "per file (describe_files)"),
            row(f"{label}: described, against reading", got["mode"], None, "ms", "lower",
                got["read"], "reading the changed files' bytes"),
            row(f"{label}: the describer alone", got["memory"], 50.0, "ms", "lower"),
        ]
    return finish(rows, f"runs per figure: {runs}")


if __name__ == "__main__":
    sys.exit(main())
