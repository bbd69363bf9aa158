"""The list of recent workspaces: ``$PNEUMA_HOME/workspaces.json``.

Every `pneuma run` and every workspace the launcher opens adds (or moves to
the top) one entry: the folder, its mode and when it was opened. Only that
is stored; what the launcher shows beside it (the last message, the size,
whether it is served now) is read from the workspace each time
(``pneuma.launcher.details``), so the list never goes stale.

Several processes write it (a `pneuma run` in each terminal, the
launcher): each change is a read-modify-write under an exclusive ``flock``
on ``workspaces.json.lock``, written to a temporary file and renamed over
the list, so a reader sees the old list or the new one, never half. The
list keeps the newest ``MAX_ENTRIES``. A damaged file (not JSON, not the
shape below) is moved aside as ``workspaces.json.damaged-<time>`` (``-2``,
``-3``… when that name is taken: an earlier copy is never overwritten)
with a warning, and the list starts empty: a bad file must never stop
Pneuma. The list and its lock are opened without following a link and
without waiting on a FIFO; a link, a FIFO, a folder or a device there is
refused with ``UnusableList``, whose text names the file. The file itself
(lock, links, atomic write, the copy aside) is pneuma.core.user_files.

    {"version": 1, "workspaces": [{"path": "/abs/dir", "mode": "doc", "openedAt": 1764130000.0}]}
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.core.user_files import UnusableUserFile, UserFile

log = logging.getLogger(__name__)

LIST_FILE = "workspaces.json"
LIST_VERSION = 1
MAX_ENTRIES = 200


def pneuma_home(environ: dict[str, str] | None = None) -> Path:
    """Where Pneuma keeps its own data: ``$PNEUMA_HOME``, else
    ``$XDG_DATA_HOME/pneuma``, else ``~/.local/share/pneuma``."""
    env = os.environ if environ is None else environ
    if env.get("PNEUMA_HOME"):
        return Path(env["PNEUMA_HOME"]).expanduser()
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]).expanduser() / "pneuma"
    return Path.home() / ".local" / "share" / "pneuma"


@dataclass(frozen=True)
class RecentEntry:
    path: str  # absolute, resolved
    mode: str
    opened_at: float  # seconds since the epoch

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "mode": self.mode, "openedAt": self.opened_at}


def _entry(raw: Any) -> RecentEntry | None:
    if not isinstance(raw, dict):
        return None
    path, mode, opened = raw.get("path"), raw.get("mode"), raw.get("openedAt")
    if not isinstance(path, str) or not path.startswith("/") or not isinstance(mode, str):
        return None
    if not isinstance(opened, (int, float)) or isinstance(opened, bool):
        return None
    return RecentEntry(path, mode, float(opened))


class DamagedList(ValueError):
    """The list file is not one this code wrote."""


class UnusableList(UnusableUserFile):
    """The list (or its lock) cannot be used as it is: a link, a FIFO, a
    folder, a device, or a damaged file that could not be moved aside.
    ``str()`` is the one line to show; it names the file."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(path, f"the list of recent workspaces {path} {why}; move it away "
                               "(Pneuma then starts a new list)")


def _parse(data: bytes) -> list[RecentEntry]:
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DamagedList(f"not JSON: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("workspaces"), list):
        raise DamagedList("no 'workspaces' list")
    entries = []
    for raw in document["workspaces"]:
        entry = _entry(raw)
        if entry is not None:  # one odd entry is skipped, not the whole list
            entries.append(entry)
    return entries


class RecentWorkspaces:
    """The list in ``home`` (default: ``pneuma_home()``). ``warn`` hears
    about a damaged file (default: the log)."""

    def __init__(self, home: Path | None = None,
                 warn: Callable[[str], None] | None = None) -> None:
        self.home = home if home is not None else pneuma_home()
        self._file = UserFile(self.home, LIST_FILE, UnusableList)
        self.path = self._file.path
        self._warn = warn or log.warning

    def entries(self) -> list[RecentEntry]:
        """Newest first. Reading takes no lock: the file is only ever replaced whole."""
        data = self._file.read()
        if data is None:
            return []
        try:
            return _parse(data)
        except DamagedList:
            with self._locked():  # set it aside once, under the lock
                return self._read_locked()

    def record(self, workspace: Path, mode: str, *, now: float | None = None) -> RecentEntry:
        """Put ``workspace`` at the top of the list (with ``mode``)."""
        entry = RecentEntry(str(Path(workspace).resolve()), mode,
                            time.time() if now is None else now)
        with self._locked():
            entries = [e for e in self._read_locked() if e.path != entry.path]
            self._write_locked([entry, *entries])
        return entry

    def forget(self, workspace: Path | str) -> bool:
        """Remove ``workspace`` from the list (its folder is left alone);
        False when it was not listed."""
        path = str(workspace)
        with self._locked():
            entries = self._read_locked()
            kept = [e for e in entries if e.path != path]
            if len(kept) == len(entries):
                return False
            self._write_locked(kept)
        return True

    def find(self, workspace: Path | str) -> RecentEntry | None:
        path = str(workspace)
        return next((e for e in self.entries() if e.path == path), None)

    def _locked(self) -> AbstractContextManager[None]:
        return self._file.locked()

    def _read_locked(self) -> list[RecentEntry]:
        data = self._file.read()
        if data is None:
            return []
        try:
            return _parse(data)
        except DamagedList as exc:
            try:
                aside = self._file.move_aside(
                    f"{LIST_FILE}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
            except OSError as move_error:
                # Starting a new list would replace the damaged one: refused.
                raise UnusableList(self.path, f"is damaged ({exc}) and could not be moved "
                                   f"aside ({move_error.strerror or move_error})") from None
            self._warn(f"the list of recent workspaces {self.path} is damaged ({exc}); "
                       f"starting a new one; it was moved to {aside}")
            return []

    def _write_locked(self, entries: list[RecentEntry]) -> None:
        entries = sorted(entries, key=lambda e: e.opened_at, reverse=True)[:MAX_ENTRIES]
        data = json.dumps({"version": LIST_VERSION,
                           "workspaces": [e.to_json() for e in entries]},
                          ensure_ascii=False, indent=1).encode("utf-8")
        self._file.write(data)
