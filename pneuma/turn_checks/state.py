"""The turn checks' state in the workspace: ``.pneuma/turn-checks.json``
(docs/checks.md, "Where results are kept").

    {"version": 1, "repair": true, "results": [{"ref": "4", "status": "failed", …}, …]}

``repair`` is the workspace's setting (absent: on). ``results`` are the
newest turns' results (at most ``MAX_RESULTS``), so a reload and
``GET /api/turn-checks`` show each turn's badge. Written through
pneuma.core.state_files: a link at the name is never followed. A damaged
file gives the defaults (and one warning); the next write replaces it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pneuma.core.state_files import (
    STATE_DIR,
    UnsafeStatePath,
    read_state_bytes,
    write_state_bytes,
)

log = logging.getLogger(__name__)

FILE_NAME = "turn-checks.json"
VERSION = 1
MAX_RESULTS = 200
MAX_FILE_BYTES = 4 * 1024 * 1024


class TurnCheckState:
    """The setting and the kept results of one workspace."""

    def __init__(self, workspace: Path) -> None:
        self.path = workspace / STATE_DIR / FILE_NAME
        self.repair = True
        self.results: list[dict[str, Any]] = []
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(read_state_bytes(self.path, MAX_FILE_BYTES))
        except FileNotFoundError:
            return
        except (OSError, UnsafeStatePath, ValueError) as exc:
            log.warning("%s could not be read (%s): the checks start afresh", self.path, exc)
            return
        if not isinstance(data, dict):
            return
        if isinstance(data.get("repair"), bool):
            self.repair = data["repair"]
        results = data.get("results")
        if isinstance(results, list):
            self.results = [r for r in results if isinstance(r, dict)][-MAX_RESULTS:]

    def set_repair(self, on: bool) -> None:
        self.repair = on
        self._save()

    def keep(self, result: dict[str, Any]) -> None:
        """Keep one turn's result (replacing an earlier one of the same turn)."""
        key = _turn_key(result)
        self.results = [r for r in self.results if key is None or _turn_key(r) != key]
        self.results.append(result)
        del self.results[:-MAX_RESULTS]
        self._save()

    def _save(self) -> None:
        while True:
            data = {"version": VERSION, "repair": self.repair, "results": self.results}
            encoded = json.dumps(data, ensure_ascii=False).encode()
            # Within what the next start reads: the oldest results go first.
            if len(encoded) <= MAX_FILE_BYTES or not self.results:
                break
            del self.results[: max(1, len(self.results) // 4)]
        try:
            write_state_bytes(self.path, encoded)
        except (OSError, UnsafeStatePath) as exc:
            log.warning("could not keep the turn checks in %s: %s", self.path, exc)


def _turn_key(result: dict[str, Any]) -> str | None:
    for key in ("client_msg_id", "ref", "user_timestamp"):
        if result.get(key) is not None:
            return f"{key}:{result[key]}"
    return None
