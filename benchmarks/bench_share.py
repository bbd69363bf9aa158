"""Sharing a workspace as one file (issue 29): how big the shared file of a
50-turn slide session is, and how long it takes to build.

    python benchmarks/bench_share.py [--turns 50] [--runs 3] [--quick]

The session is made with the checkpoint store directly (``record`` → the
turn's writes → ``turn_ended``, pneuma.testing.slide_session): a 20-slide
deck, each turn retitling one slide, with a conversation of two messages a
turn. Then ``pneuma share``'s builder (pneuma.share.builder) writes it.

Baselines in the same run, on the same contents:
- the sum of the unique file contents the file holds (what deduplication
  alone leaves), and every turn's files summed (what it would be without);
- a ``zip -9`` (zipfile, deflate level 9) of those unique contents: the
  contents as the file holds them should be within base64's third of it;
- reading every unique content from the checkpoint store once: the least
  a build must do.

The page itself (the player and the mode's viewer, pneuma.share.inline) is
shown on its own row: it is the same for any session of the mode.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import finish, median, row, temp_dir  # noqa: E402

from pneuma.checkpoints.store import Checkpoints  # noqa: E402
from pneuma.share.builder import ShareOptions, build_share, render_share, write_share  # noqa: E402
from pneuma.share.model import ShareData  # noqa: E402
from pneuma.testing.slide_session import make_slide_session  # noqa: E402

SLIDES = 20


def unique_contents(data: ShareData) -> dict[str, bytes]:
    return {digest: data.contents(digest) for digest in data.files}


def zipped_size(contents: dict[str, bytes]) -> int:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for digest, content in contents.items():
            archive.writestr(digest, content)
    return len(buffer.getvalue())


def read_every_content(workspace: Path) -> float:
    """ms to read each unique content of every turn from the store once."""
    started = time.perf_counter()
    store = Checkpoints.open_existing(workspace)
    seen: set[str] = set()
    with store.blob_reader() as read:
        for checkpoint in store.checkpoints():
            for state in (checkpoint.files, checkpoint.after or {}):
                for path, entry in state.items():
                    if entry.hash and entry.hash not in seen:
                        seen.add(entry.hash)
                        read(entry.hash, path)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run, 20 turns")
    args = parser.parse_args()
    turns, runs = (20, 1) if args.quick else (args.turns, args.runs)
    root = temp_dir("pneuma-bench-share-")
    try:
        workspace = root / "deck"
        make_slide_session(workspace, turns, slides=SLIDES,
                           answer_extra="I changed the title and kept the rest of the deck.")
        build_ms, shared = [], None
        for n in range(runs + 1):  # one untimed run first: imports, the viewer's modules
            started = time.perf_counter()
            shared = write_share(workspace, root / "deck-share.html")
            if n:
                build_ms.append((time.perf_counter() - started) * 1000)
        assert shared is not None
        data = build_share(workspace)
        contents = unique_contents(data)
        unique_kb = sum(len(c) for c in contents.values()) / 1024
        every_turn_kb = sum(len(data.contents(d)) for t in data.turns
                            for d in t.tree.values()) / 1024
        zip_kb = zipped_size(contents) / 1024
        empty = ShareData(mode=data.mode, title=data.title, created_at=data.created_at,
                          viewer=data.viewer)
        page_kb = len(render_share(empty).encode("utf-8")) / 1024
        file_kb = shared.size / 1024
        data_kb = file_kb - page_kb
        no_chat = write_share(workspace, root / "quiet.html", ShareOptions(chat=False))
        reading_ms = median([read_every_content(workspace) for _ in range(runs)])
        packed_kb = sum(len(p) for p in data.files.values()) / 1024
        rows = [
            row("share: the contents in the file (deduplicated, zlib, base64)", packed_kb,
                zip_kb * 1.45, "KB", "lower", baseline=zip_kb,
                baseline_label="zip -9 of the unique contents"),
            row(f"share: the {turns} turns' trees, changes and chat", data_kb - packed_kb, None,
                "KB", "lower", info=True),
            row("share: the whole file", file_kb, None, "KB", "lower", baseline=unique_kb,
                baseline_label="unique contents, uncompressed"),
            row("share: every turn's files, not deduplicated", every_turn_kb, None, "KB",
                "lower", info=True),
            row("share: the page with no turns (player and viewer)", page_kb, None, "KB",
                "lower", info=True),
            row("share: the file without the chat", no_chat.size / 1024, None, "KB", "lower",
                info=True),
            row(f"share: build time, {turns} turns", median(build_ms), 5000.0, "ms", "lower",
                baseline=reading_ms, baseline_label="reading each content once"),
        ]
        return finish(rows, f"turns: {turns}, slides: {SLIDES}, unique contents: {len(contents)}, "
                      f"runs: {runs}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
