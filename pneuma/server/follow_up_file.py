"""The queued follow-ups on disk: ``W/.pneuma/queued-messages.json``,
rewritten whole each time the queue changes (docs/protocol.md, "Queued
follow-ups"), so that a server stopped in any way (Ctrl-C, the launcher's
Stop, a crash, kill -9) leaves the queue as the tabs last saw it.

Written with ``pneuma.core.state_files.write_state_bytes`` (a temporary
file synced and renamed over the old one, never through a link): after a
kill the file is the old queue or the new one, never half of either. Read
with ``read_state_bytes`` (``O_NOFOLLOW``, ``O_NONBLOCK``): a link, a FIFO
or a folder planted at the name is refused, a damaged file is set aside
under ``.damaged`` (its bytes are the person's), and either is one warning
and an empty queue.

The messages are kept whole: text, viewer context and the images' own
bytes, since a picture the person attached cannot be typed again. The file
is bounded (``MAX_QUEUE_FILE_BYTES``); a follow-up that would take the
queue past it is refused when it is sent (``E_TOO_LARGE``) rather than
kept in memory only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pneuma.core.messages import UserMessage
from pneuma.core.state_files import (
    STATE_DIR,
    UnsafeStatePath,
    open_parent,
    read_state_bytes,
    write_state_bytes,
)

QUEUE_FILE = "queued-messages.json"
FORMAT_VERSION = 1
# Above one socket message (pneuma.server.ws_browser.MAX_MESSAGE_BYTES,
# 32 MiB) so that any single follow-up the page can send fits.
MAX_QUEUE_FILE_BYTES = 48 * 1024 * 1024


@dataclass
class KeptFollowUp:
    """One queued follow-up as the file keeps it."""

    queue_id: str
    message: UserMessage
    timestamp: float
    held: bool = False

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"queue_id": self.queue_id, "timestamp": self.timestamp,
                                 "message": self.message.model_dump(mode="json", exclude_none=True)}
        if self.held:
            entry["held"] = True
        return entry


class QueueTooLarge(Exception):
    """The queue would not fit the file's bound; ``str()`` says so."""


def queue_path(workspace: Path) -> Path:
    return Path(workspace) / STATE_DIR / QUEUE_FILE


def encode(queue: list[KeptFollowUp]) -> bytes:
    """The file's bytes for ``queue``; ``QueueTooLarge`` past the bound."""
    data = json.dumps({"version": FORMAT_VERSION, "queue": [q.to_json() for q in queue]},
                      ensure_ascii=False, separators=(",", ":")).encode()
    if len(data) > MAX_QUEUE_FILE_BYTES:
        raise QueueTooLarge(f"the queued messages would take {_mb(len(data))} on disk, more than "
                            f"the {_mb(MAX_QUEUE_FILE_BYTES)} Pneuma keeps")
    return data


def save(path: Path, data: bytes) -> None:
    write_state_bytes(path, data)


def load(path: Path) -> tuple[list[KeptFollowUp], str | None]:
    """The queue a stopped run left in ``path`` and, when it could not be
    read, the one warning to give (the queue is then empty)."""
    try:
        data = read_state_bytes(path, MAX_QUEUE_FILE_BYTES + 1)
    except FileNotFoundError:
        return [], None
    except UnsafeStatePath as exc:
        return [], f"{exc}; the queued messages of the last run were not read"
    except OSError as exc:
        return [], f"could not read {path}: {exc.strerror or exc}; the queue starts empty"
    if len(data) > MAX_QUEUE_FILE_BYTES:
        problem = f"is larger than {_mb(MAX_QUEUE_FILE_BYTES)}"
    else:
        try:
            return _parse(data), None
        except (ValueError, TypeError, KeyError, ValidationError) as exc:
            problem = f"is damaged ({_first_line(exc)})"
    return [], f"{path} {problem}; the queue starts empty{_set_aside(path)}"


def _parse(data: bytes) -> list[KeptFollowUp]:
    document = json.loads(data)
    if not isinstance(document, dict) or not isinstance(document.get("queue"), list):
        raise ValueError("no queue in it")
    queue = []
    for entry in document["queue"]:
        queue_id, timestamp = entry["queue_id"], entry.get("timestamp", 0.0)
        if not isinstance(queue_id, str) or not queue_id or not isinstance(timestamp, int | float):
            raise ValueError("an entry without a queue id")
        message = UserMessage.model_validate({**entry["message"], "type": "user_message"})
        queue.append(KeptFollowUp(queue_id, message, float(timestamp), held=True))
    return queue


def _set_aside(path: Path) -> str:
    """Rename the unreadable file beside itself (not a link: read refused
    those), so that the next write does not replace the person's bytes."""
    aside = path.name + ".damaged"
    try:
        dir_fd, name = open_parent(path, create=False)
        try:
            os.replace(name, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        return ""
    return f" (it is kept as {aside})"


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{size} bytes"
