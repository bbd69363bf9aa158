"""The coauthor mode describes a turn by the paper's outline and the
bibliography's keys, and reverts one change alone (issue 28, items 1-2)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import pneuma_coauthor
from pneuma.api import TurnFilesFromMaps
from pneuma.host.turn_changes import describe_turn, find_change, revert_contents
from pneuma_coauthor.changes import DESCRIBER

SEEDS = Path(pneuma_coauthor.__file__).parent / "seeds"
METHOD = "sections/method.tex"


@pytest.fixture(scope="module")
def paper() -> dict[str, bytes]:
    return {p.relative_to(SEEDS).as_posix(): p.read_bytes() for p in SEEDS.rglob("*") if p.is_file()}


def _edited(paper: dict[str, bytes], path: str, old: str, new: str) -> dict[str, bytes]:
    text = paper[path].decode()
    assert old in text
    return {**paper, path: text.replace(old, new, 1).encode()}


def _summary(turn) -> list[str]:
    return [f"{c.where}: {c.to_json()['what']['en']}" for c in turn.changes]


def test_a_retitle_a_paragraph_and_a_new_reference_are_named_by_the_outline(paper) -> None:
    after = _edited(paper, METHOD, "\\subsection{Tasks on an append-only log}", "\\subsection{Tasks on a log}")
    after = _edited(after, METHOD, "Every request, whether typed", "Each request, whether typed")
    after = _edited(after, "sections/results.tex", "\\section{", "\\section{Findings}\n\\label{x}\n\n\\section{")
    bib = after["refs.bib"].decode() + "\n@article{knuth1984literate,\n  author = {Knuth, Donald E.},\n}\n"
    after = {**after, "refs.bib": bib.encode()}
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps(paper, after))
    assert turn.source == "mode"
    assert _summary(turn) == [
        "§2 Design › 2.2 Tasks on a log: retitled (was “Tasks on an append-only log”)",
        "§2 Design › 2.2 Tasks on a log: paragraph 1 changed",
        "§3 Findings: section added",
        "refs.bib: entry knuth1984literate added",
    ]
    retitle = turn.changes[0]
    assert retitle.kind == "renamed"
    assert retitle.locate == {"file": METHOD, "line": paper[METHOD].decode().split("\n").index(
        "\\subsection{Tasks on an append-only log}") + 1}
    assert turn.changes[3].to_json()["what"]["zh-CN"] == "新增条目 knuth1984literate"


def test_reverting_one_paragraph_keeps_the_retitle_and_the_persons_later_edit(paper) -> None:
    after = _edited(paper, METHOD, "\\subsection{Tasks on an append-only log}", "\\subsection{Tasks on a log}")
    after = _edited(after, METHOD, "Every request, whether typed", "Each request, whether typed")
    files = TurnFilesFromMaps(paper, after)
    turn = describe_turn(DESCRIBER, files)
    paragraph = turn.changes[1]
    # since the turn, the person edited the first paragraph of the file
    now = after[METHOD].decode().replace("The design has three parts", "The design has 3 parts")
    written = revert_contents(turn, files, paragraph, {METHOD: now.encode()})[METHOD].decode()
    assert "Every request, whether typed" in written
    assert "\\subsection{Tasks on a log}" in written
    assert "The design has 3 parts" in written
    # on the file as the turn left it, the revert is exact
    exact = revert_contents(turn, files, paragraph, {METHOD: after[METHOD]})[METHOD]
    assert exact == _edited(paper, METHOD, "\\subsection{Tasks on an append-only log}",
                            "\\subsection{Tasks on a log}")[METHOD]


def test_a_change_whose_lines_were_edited_since_is_not_reverted_silently(paper) -> None:
    after = _edited(paper, METHOD, "Every request, whether typed", "Each request, whether typed")
    files = TurnFilesFromMaps(paper, after)
    turn = describe_turn(DESCRIBER, files)
    [change] = turn.changes
    now = after[METHOD].decode().replace("Each request, whether typed", "Any request, whether typed")
    with pytest.raises(ValueError, match="edited since the turn"):
        revert_contents(turn, files, change, {METHOD: now.encode()})


def test_removed_sections_and_reverting_a_removed_bibliography_entry(paper) -> None:
    method = paper[METHOD].decode()
    start = method.index("\\subsection{Tasks on an append-only log}")
    end = method.index("\\subsection", start + 10)
    after = {**paper, METHOD: (method[:start] + method[end:]).encode()}
    bib = paper["refs.bib"].decode()
    entry_start = bib.index("@article{shneiderman1997direct")
    entry_end = bib.index("\n@", entry_start) + 1
    after["refs.bib"] = (bib[:entry_start] + bib[entry_end:]).encode()
    files = TurnFilesFromMaps(paper, after)
    turn = describe_turn(DESCRIBER, files)
    assert _summary(turn) == [
        "§2 Design › 2.1 The workspace is the interface: section “Tasks on an append-only log” removed",
        "refs.bib: entry shneiderman1997direct removed",
    ]
    entry = find_change(turn, turn.changes[1].id)
    assert entry is not None
    restored = revert_contents(turn, files, entry, {"refs.bib": after["refs.bib"]})
    assert restored == {"refs.bib": paper["refs.bib"]}


def test_broken_and_new_files_are_whole_file_changes_and_never_raise(paper) -> None:
    after = {**paper, "sections/intro-old.tex": b"\\section{Unclosed", "sections/method.tex": b"\xff\xfe\x00",
             "sections/related.tex": b"\\section{Related work}\nText.\n"}
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps(paper, after))
    assert turn.source == "mode"
    assert {c.id: c.kind for c in turn.changes} == {
        "file:sections/method.tex": "changed", "file:sections/intro-old.tex": "added",
        "file:sections/related.tex": "added"}


def test_a_two_thousand_line_chapter_is_described_in_a_few_milliseconds() -> None:
    lines = ["\\documentclass{article}", "\\begin{document}"]
    for section in range(40):
        lines += [f"\\section{{Part {section}}}", ""]
        for paragraph in range(12):
            lines += [f"Sentence {section}.{paragraph}.{n} of the text." for n in range(3)] + [""]
    lines.append("\\end{document}")
    text = "\n".join(lines)
    changed = text.replace("Sentence 31.4.1 of", "A new sentence of").replace("Sentence 7.0.0 of", "Another of")
    before, after = {"main.tex": text.encode()}, {"main.tex": changed.encode()}
    started = time.perf_counter()
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps(before, after))
    took = time.perf_counter() - started
    assert len(text.split("\n")) > 2000
    assert _summary(turn) == ["§8 Part 7: paragraph 1 changed", "§32 Part 31: paragraph 5 changed"]
    assert took < 0.25, took


def test_sections_are_numbered_in_reading_order_through_inputs_and_the_appendix() -> None:
    main = ("\\documentclass{article}\n\\begin{document}\n\\section{Intro}\nHello.\n"
            "\\input{body}\n\\section*{Thanks}\n\\appendix\n\\section{Proofs}\nProof one.\n\n"
            "Proof two.\n\\end{document}\n")
    body = "\\section{Method}\n\\subsection{Data}\nData.\n\n\\label{x}\n\nMore data.\n"
    before = {"main.tex": main.encode(), "body.tex": body.encode()}
    after = {"main.tex": main.replace("Proof two.", "Proof 2.").encode(),
             "body.tex": body.replace("More data.", "More data, checked.").encode()}
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps(before, after))
    assert _summary(turn) == ["\u00a72 Method › 2.1 Data: paragraph 2 changed",
                              "\u00a7A Proofs: paragraph 2 changed"]


def test_the_coauthor_mode_registers_its_describer() -> None:
    from pneuma.host.plugins import build_plugin_manager
    from pneuma.host.turn_changes import all_describers

    assert all_describers(build_plugin_manager())["coauthor"] is DESCRIBER


def test_the_terminal_reverts_one_paragraph_then_the_other_of_the_same_file(tmp_path: Path) -> None:
    """`pneuma checkpoints show/revert` with the coauthor describer: two
    paragraphs of one file changed in a turn; reverting one keeps the
    other on disk, and the second revert is no conflict."""
    import json

    from click.testing import CliRunner

    from pneuma.checkpoints import Checkpoints
    from pneuma.cli.checkpoints import checkpoints
    from pneuma.host.registry import get_mode
    from pneuma.workspace.params import init_workspace

    init_workspace(get_mode("coauthor"), tmp_path, {}, record=True)
    store = Checkpoints(tmp_path)
    store.record("tighten the design section")
    method = tmp_path / METHOD
    original = method.read_text()
    method.write_text(original.replace("The design has three parts", "The design has 3 parts")
                      .replace("Every request, whether typed", "Each request, whether typed"))
    store.turn_ended()

    shown = CliRunner().invoke(checkpoints, ["show", "1", "-w", str(tmp_path), "--json"])
    assert shown.exit_code == 0, shown.output
    listed = json.loads(shown.stdout)
    assert listed["source"] == "mode"
    assert [c["where"] for c in listed["changes"]] == ["\u00a72 Design", "\u00a72 Design › 2.2 Tasks on an append-only log"]
    first, second = (c["id"] for c in listed["changes"])

    reverted = CliRunner().invoke(checkpoints, ["revert", "1", second, "-w", str(tmp_path)])
    assert reverted.exit_code == 0, reverted.output
    text = method.read_text()
    assert "Every request, whether typed" in text and "The design has 3 parts" in text
    again = CliRunner().invoke(checkpoints, ["revert", "1", first, "-w", str(tmp_path)])
    assert again.exit_code == 0, again.output
    assert method.read_text() == original


def test_reverting_every_change_one_by_one_in_any_order_gives_back_the_file() -> None:
    import random

    rng = random.Random(28)
    pieces = ["\\section{A}", "\\subsection{B}", "", "text one", "text two", "% note", "\\label{x}", "more",
              "@article{k1,", "  title = {T},", "}"]
    checked = 0
    for _ in range(300):
        old = [rng.choice(pieces) for _ in range(rng.randint(3, 30))]
        new = list(old)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(new))
            roll = rng.random()
            if roll < 0.4:
                new.insert(at, rng.choice(pieces))
            elif new:
                del new[min(at, len(new) - 1)]
                if roll > 0.7:
                    new.insert(min(at, len(new)), rng.choice(pieces))
        path = rng.choice(["main.tex", "refs.bib"])
        before, after = {path: ("\n".join(old) + "\n").encode()}, {path: ("\n".join(new) + "\n").encode()}
        if before == after:
            continue
        files = TurnFilesFromMaps(before, after)
        turn = describe_turn(DESCRIBER, files)
        now = after[path]
        for change in rng.sample(turn.changes, len(turn.changes)):
            now = revert_contents(turn, files, change, {path: now})[path]  # type: ignore[assignment]
        assert now == before[path], (old, new)
        checked += 1
    assert checked > 250
