"""The hand-edited files are kept across a restart (.pneuma/edits/pending.json,
never through a link) and named once, before the next turn."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path

from pneuma.editing.hand_edits import HandEdits


@dataclass
class Turn:
    prefixes: list[str] = field(default_factory=list)


def test_a_restart_between_the_edit_and_the_next_message_still_tells(tmp_path: Path) -> None:
    pending = tmp_path / ".pneuma" / "edits" / "pending.json"
    first = HandEdits(pending)
    first.record("a.md")
    first.record("notes/b.md")
    first.record("a.md")
    again = HandEdits(pending)  # the next run
    turn = Turn()
    asyncio.run(again.before_turn(turn))
    assert turn.prefixes == ['<person-edited files="a.md, notes/b.md">The person edited these files by hand '
                             "in the viewer since your last turn; read them before changing them.</person-edited>"]
    assert HandEdits(pending).pending == []  # named once


def test_a_link_planted_at_the_list_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('["secret.md"]')
    state = tmp_path / "ws" / ".pneuma" / "edits"
    state.mkdir(parents=True)
    os.symlink(outside, state / "pending.json")
    edits = HandEdits(state / "pending.json")
    assert edits.pending == []  # not read through the link
    edits.record("a.md")
    assert outside.read_text() == '["secret.md"]'  # not written through it either
    assert edits.pending == ["a.md"]
