"""The workspace's review pins on disk: ``.pneuma/review-pins.json``.

The file is Pneuma's own state, so it is opened through
``pneuma.core.state_files`` (never through a link: a planted link is
replaced on write, never followed) and replaced atomically. A file that
cannot be read as pins (damaged, foreign, too big) is moved aside beside
itself and read as no pins: the person's pins are worth less than the
page working, but nothing is deleted.

Pins are checked here, where they cross from the page into the file: a
bounded count, bounded text per pin, a bounded file. The selection is the
viewer's own JSON and stays opaque, only its size is bounded.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.core.state_files import (
    STATE_DIR,
    UnsafeStatePath,
    open_parent,
    read_state_bytes,
    write_state_bytes,
)

log = logging.getLogger(__name__)

PINS_FILE = "review-pins.json"
MAX_PINS = 500
MAX_COMMENT_CHARS = 10_000
MAX_SELECTION_BYTES = 32 * 1024
MAX_PLACE_CHARS = 4_096
MAX_ID_CHARS = 100
MAX_FILE_BYTES = 8 * 1024 * 1024
STATUSES = ("open", "sent", "addressed")


@dataclass(frozen=True)
class Pins:
    """The pins as stored: their list and a revision that grows with each write."""

    pins: list[dict[str, Any]]
    revision: int

    def as_json(self) -> dict[str, Any]:
        return {"pins": self.pins, "revision": self.revision}


def _bad(message: str, **details: Any) -> ToolError:
    return ToolError("E_BAD_ARGS", message, details=details)


def _pin(raw: Any, index: int) -> dict[str, Any]:
    """One pin from the page, checked and reduced to its known fields."""
    if not isinstance(raw, dict):
        raise _bad(f"pin {index + 1} is not an object", index=index)
    pin_id = raw.get("id")
    if not isinstance(pin_id, str) or not 0 < len(pin_id) <= MAX_ID_CHARS:
        raise _bad(f"pin {index + 1} needs an id of 1 to {MAX_ID_CHARS} characters",
                   index=index, field="id")
    comment = raw.get("comment", "")
    if not isinstance(comment, str):
        raise _bad(f"pin {index + 1}'s comment is not text", index=index, field="comment")
    if len(comment) > MAX_COMMENT_CHARS:
        raise ToolError("E_TOO_LARGE",
                        f"pin {index + 1}'s comment is over {MAX_COMMENT_CHARS} characters",
                        details={"index": index, "field": "comment", "limit": MAX_COMMENT_CHARS})
    status = raw.get("status", "open")
    if status not in STATUSES:
        raise _bad(f"pin {index + 1}'s status must be one of {', '.join(STATUSES)}",
                   index=index, field="status")
    place = raw.get("place")
    if place is not None and (not isinstance(place, str) or len(place) > MAX_PLACE_CHARS):
        raise _bad(f"pin {index + 1}'s place must be text of at most {MAX_PLACE_CHARS} characters",
                   index=index, field="place")
    selection = raw.get("selection")
    encoded = json.dumps(selection, ensure_ascii=False)
    if len(encoded.encode("utf-8")) > MAX_SELECTION_BYTES:
        raise ToolError("E_TOO_LARGE",
                        f"pin {index + 1}'s selection is over {MAX_SELECTION_BYTES} bytes",
                        details={"index": index, "field": "selection", "limit": MAX_SELECTION_BYTES})
    created = raw.get("created")
    return {
        "id": pin_id,
        "number": index + 1,  # the list's order numbers the pins, one to n
        "selection": selection,
        "comment": comment,
        "status": status,
        "place": place,
        "created": created if isinstance(created, (int, float)) else None,
    }


def checked_pins(raw: Any) -> list[dict[str, Any]]:
    """The page's pin list, checked (E_BAD_ARGS / E_TOO_LARGE) and numbered."""
    if not isinstance(raw, list):
        raise _bad("'pins' must be a list", field="pins")
    if len(raw) > MAX_PINS:
        raise ToolError("E_TOO_LARGE", f"at most {MAX_PINS} pins can be kept, not {len(raw)}",
                        details={"field": "pins", "limit": MAX_PINS})
    pins = [_pin(item, index) for index, item in enumerate(raw)]
    ids = [pin["id"] for pin in pins]
    if len(set(ids)) != len(ids):
        raise _bad("two pins have the same id", field="id")
    return pins


class PinStore:
    """The pins of one workspace, read once and written on every change."""

    def __init__(self, workspace: Path) -> None:
        self.path = Path(workspace) / STATE_DIR / PINS_FILE
        self._current: Pins | None = None

    def load(self) -> Pins:
        if self._current is None:
            self._current = self._read()
        return self._current

    def save(self, raw_pins: Any) -> Pins:
        """Check, store and return the new pins (a new revision)."""
        pins = checked_pins(raw_pins)
        current = self.load()
        stored = Pins(pins, current.revision + 1)
        data = json.dumps({"version": 1, **stored.as_json()}, ensure_ascii=False).encode("utf-8")
        try:
            write_state_bytes(self.path, data)
        except UnsafeStatePath as exc:  # a folder on the way is a link
            raise ToolError("E_FORBIDDEN", str(exc), details={"path": f"{STATE_DIR}/{PINS_FILE}"}) from None
        except OSError as exc:
            raise ToolError("E_IO", f"could not save the review pins: {exc.strerror or exc}",
                            details={"path": f"{STATE_DIR}/{PINS_FILE}"}) from None
        self._current = stored
        return stored

    def _read(self) -> Pins:
        try:
            data = read_state_bytes(self.path, MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return Pins([], 0)
        except UnsafeStatePath as exc:
            # Not followed; the next save replaces the link itself.
            log.warning("review pins not read: %s", exc)
            return Pins([], 0)
        except OSError as exc:
            log.warning("review pins not read: %s", exc)
            return Pins([], 0)
        try:
            if len(data) > MAX_FILE_BYTES:
                raise ValueError("too big")
            body = json.loads(data.decode("utf-8"))
            revision = body.get("revision", 0)
            pins = checked_pins(body.get("pins"))
            return Pins(pins, revision if isinstance(revision, int) and revision >= 0 else 0)
        except (ValueError, AttributeError, ToolError) as exc:
            self._keep_aside(exc)
            return Pins([], 0)

    def _keep_aside(self, why: object) -> None:
        """Move the unreadable file aside (never deleted), in the same folder."""
        aside = f"{PINS_FILE}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        try:
            dir_fd, name = open_parent(self.path, create=False)
            try:
                os.rename(name, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            finally:
                os.close(dir_fd)
            log.warning("review pins could not be read (%s); kept as %s/%s", why, STATE_DIR, aside)
        except OSError as exc:
            log.warning("review pins could not be read (%s) nor kept aside: %s", why, exc)
