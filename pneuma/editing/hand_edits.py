"""Which files the person edited by hand since the agent's last turn, and
the note that tells the agent before the person's next message (as a
restore's note does; pneuma/checkpoints/turn_listener.py). A server that
keeps the workspace's state keeps the list in ``.pneuma/edits/pending.json``
too, so a restart between the edit and the next message still tells."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Protocol

from pneuma.core.state_files import read_state_bytes, write_state_bytes

log = logging.getLogger(__name__)
MAX_PENDING = 1000  # paths named in one note; a longer list is cut


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

    def __init__(self, pending_file: Path | None = None) -> None:
        self._file = pending_file
        self._paths: dict[str, None] = dict.fromkeys(self._load())  # insertion-ordered set

    def _load(self) -> list[str]:
        if self._file is None:
            return []
        try:
            data = json.loads(read_state_bytes(self._file, limit=1024 * 1024))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:  # a link planted there, a damaged file
            log.warning("could not read the hand-edited files in %s: %s", self._file, exc)
            return []
        return [p for p in data if isinstance(p, str)][:MAX_PENDING] if isinstance(data, list) else []

    def _save(self) -> None:
        if self._file is None:
            return
        try:
            write_state_bytes(self._file, json.dumps(self.pending).encode("utf-8"))
        except OSError as exc:  # the list in memory still tells this run's next turn
            log.warning("could not keep the hand-edited files in %s: %s", self._file, exc)

    def record(self, path: str) -> None:
        if path in self._paths or len(self._paths) >= MAX_PENDING:
            return
        self._paths[path] = None
        self._save()

    @property
    def pending(self) -> list[str]:
        return list(self._paths)

    async def before_turn(self, turn: _Turn) -> None:
        if not self._paths:
            return
        turn.prefixes.append(person_edited_note(self.pending))
        self._paths.clear()
        self._save()
