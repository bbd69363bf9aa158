"""Which files the person edited by hand since the agent's last turn, and
the note that tells the agent before the person's next message (as a
restore's note does; pneuma/checkpoints/turn_listener.py)."""

from __future__ import annotations

from typing import Protocol


class _Turn(Protocol):
    prefixes: list[str]


def person_edited_note(paths: list[str]) -> str:
    """The text put before the person's next message (English: the agent reads it)."""
    names = ", ".join(paths).replace('"', "'")
    return (f'<person-edited files="{names}">The person edited these files by hand in the '
            "viewer since your last turn; read them before changing them.</person-edited>")


class HandEdits:
    """A session-hooks feature: remembers hand-edited paths in the order they
    were first edited and names them once, before the next turn."""

    def __init__(self) -> None:
        self._paths: dict[str, None] = {}  # insertion-ordered set

    def record(self, path: str) -> None:
        self._paths.setdefault(path, None)

    @property
    def pending(self) -> list[str]:
        return list(self._paths)

    async def before_turn(self, turn: _Turn) -> None:
        if not self._paths:
            return
        turn.prefixes.append(person_edited_note(self.pending))
        self._paths.clear()
