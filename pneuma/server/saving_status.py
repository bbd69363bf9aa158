"""What of the workspace's state cannot be saved right now, said once.

A full disk (or a disk I/O error, or a log another process holds) makes
every save fail, every few seconds: the conversation log, the checkpoints
before and after each turn, ``session.json``. Each part reports its
failures and successes here; the terminal gets one line when saving pauses
and one when it resumes (not a traceback per attempt), and the page a
``session_update {saving}`` it shows as a banner until then
(docs/conversations.md, "When the log is damaged, locked or the disk is
full").
"""

from __future__ import annotations

import errno
import logging
import sqlite3
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

# Plain words for what stops saving, by errno and by SQLite's primary codes.
_ERRNO_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EIO: "the disk reports an I/O error",
    errno.EROFS: "the disk is read-only",
}
_SQLITE_REASONS = {
    13: "the disk is full",  # SQLITE_FULL
    10: "the disk reports an I/O error",  # SQLITE_IOERR
    8: "the log cannot be written (read-only)",  # SQLITE_READONLY
    5: "another process holds the conversation log",  # SQLITE_BUSY
    6: "another process holds the conversation log",  # SQLITE_LOCKED
}
# The parts, in the words the terminal line uses.
PART_NAMES = {"conversation": "the conversation log", "checkpoints": "checkpoints",
              "session": "the session state"}


def pause_reason(exc: BaseException) -> str | None:
    """Why ``exc`` stops saving for now, in plain words; None when it is
    not a problem of the disk (a bug, a damaged file: not for waiting out)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlite3.Error):
            code = getattr(current, "sqlite_errorcode", None)
            if isinstance(code, int) and (code & 0xFF) in _SQLITE_REASONS:
                return _SQLITE_REASONS[code & 0xFF]
        elif isinstance(current, OSError) and current.errno in _ERRNO_REASONS:
            return _ERRNO_REASONS[current.errno]
        current = current.__cause__ or current.__context__
    return None


class SavingStatus:
    """The parts whose saving is paused, and why; ``changed`` is called
    (in the event loop) with ``public()`` whenever that changes."""

    def __init__(self, changed: Callable[[dict[str, Any] | None], None] | None = None) -> None:
        self._paused: dict[str, str] = {}
        self._changed = changed

    def failed(self, part: str, exc: BaseException) -> bool:
        """``part`` could not save because of ``exc``: True when it is a
        disk problem (now shown as paused); False for anything else, which
        the caller reports as it always did."""
        reason = pause_reason(exc)
        if reason is None:
            return False
        self.pause(part, reason)
        return True

    def pause(self, part: str, reason: str, *, said: bool = False) -> None:
        """``part`` cannot save for ``reason``; ``said``: its own line
        already told the terminal (the log's, naming its file, at start)."""
        if self._paused.get(part) == reason:
            return
        first = not self._paused
        self._paused[part] = reason
        if first and not said:
            log.warning("saving paused: %s; %s will be saved when it can be (nothing shown"
                        " is lost while Pneuma runs)", reason, PART_NAMES.get(part, part))
        self._notify()

    def resumed(self, part: str) -> None:
        """``part`` saved again."""
        if self._paused.pop(part, None) is None:
            return
        if not self._paused:
            log.warning("saving resumed: everything waiting is saved")
        self._notify()

    def is_paused(self, part: str) -> bool:
        return part in self._paused

    def public(self) -> dict[str, Any] | None:
        """What the page shows: None while everything is saved."""
        if not self._paused:
            return None
        reasons = list(dict.fromkeys(self._paused.values()))
        return {"paused": sorted(self._paused), "reason": "; ".join(reasons)}

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed(self.public())
