"""State that spans tool calls, on disk under ``W/.pneuma/tools/<mode>/``.

Dry-run records (what ``writeRequiresDiff`` and ``E_CONFLICT`` check) and
idempotency keys live in JSON files written atomically, and every
read-check-write sequence holds an exclusive file lock, so a one-shot
``pneuma tool`` process, a long-lived MCP server and the HTTP route all see
the same state and never interleave a write.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pneuma.core.state_files import (
    ensure_dir,
    open_state_file,
    read_state_bytes,
    write_state_bytes,
)

DRY_RUNS = "dry_runs"
IDEMPOTENCY = "idempotency"
MAX_DRY_RUNS_PER_FILE = 20
MAX_IDEMPOTENCY_KEYS = 2000

_thread_locks: dict[str, threading.RLock] = {}
_thread_locks_guard = threading.Lock()
_held = threading.local()


class ToolState:
    def __init__(self, directory: Path, *, dry_run_ttl: float = 24 * 3600):
        self.directory = Path(directory)
        self.dry_run_ttl = dry_run_ttl

    # --- generic namespaced JSON documents (handlers may keep their own) ---

    def load(self, name: str, default: Any = None) -> Any:
        path = self.directory / f"{name}.json"
        try:
            return json.loads(read_state_bytes(path))
        except FileNotFoundError:
            return default
        except (OSError, ValueError):
            # A damaged state file must not wedge every later call.
            return default

    def save(self, name: str, value: Any) -> None:
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        write_state_bytes(self.directory / f"{name}.json", data, None)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive across processes (flock) and threads; re-entrant in a thread."""
        ensure_dir(self.directory)
        key = str(self.directory.resolve())
        with _thread_locks_guard:
            tlock = _thread_locks.setdefault(key, threading.RLock())
        depths = _held.__dict__.setdefault("depths", {})
        with tlock:
            if depths.get(key):
                depths[key] += 1
                try:
                    yield
                finally:
                    depths[key] -= 1
                return
            fd = open_state_file(self.directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                _flock(fd)
                depths[key] = 1
                try:
                    yield
                finally:
                    depths[key] = 0
            finally:
                os.close(fd)  # closing releases the lock

    # --- dry runs ---

    def record_dry_run(self, rel: str, new_content_hash: str, base_hash: str | None,
                       **extra: Any) -> None:
        """Remember that a dry run of ``rel`` showed a diff to content
        ``new_content_hash`` while the file was ``base_hash`` (None: absent)."""
        with self.lock():
            records = self._live_dry_runs()
            mine = [r for r in records.get(rel, []) if r["newHash"] != new_content_hash]
            mine.append({"newHash": new_content_hash, "baseHash": base_hash,
                         "at": time.time(), **extra})
            records[rel] = mine[-MAX_DRY_RUNS_PER_FILE:]
            self.save(DRY_RUNS, records)

    def dry_run_for(self, rel: str, content_hash: str | None = None,
                    **match: Any) -> dict[str, Any] | None:
        """The newest live dry-run record of ``rel`` whose new content is
        ``content_hash`` (or whose extra fields equal ``match``)."""
        for record in reversed(self._live_dry_runs().get(rel, [])):
            if content_hash is not None and record.get("newHash") != content_hash:
                continue
            if any(record.get(k) != v for k, v in match.items()):
                continue
            return record
        return None

    def annotate_dry_run(self, rel: str, new_content_hash: str, **fields: Any) -> None:
        """Add ``fields`` to the live dry-run record of ``rel`` showing
        ``new_content_hash`` (e.g. the id of the confirmation it opened)."""
        with self.lock():
            records = self._live_dry_runs()
            for record in reversed(records.get(rel, [])):
                if record.get("newHash") == new_content_hash:
                    record.update(fields)
                    self.save(DRY_RUNS, records)
                    return

    def consume_dry_run(self, rel: str, content_hash: str) -> None:
        with self.lock():
            records = self._live_dry_runs()
            mine = [r for r in records.get(rel, []) if r.get("newHash") != content_hash]
            if mine:
                records[rel] = mine
            else:
                records.pop(rel, None)
            self.save(DRY_RUNS, records)

    def _live_dry_runs(self) -> dict[str, list[dict[str, Any]]]:
        records = self.load(DRY_RUNS, {})
        if not isinstance(records, dict):
            return {}
        cutoff = time.time() - self.dry_run_ttl
        live = {}
        for rel, items in records.items():
            if isinstance(items, list):
                kept = [r for r in items if isinstance(r, dict) and r.get("at", 0) >= cutoff]
                if kept:
                    live[rel] = kept
        return live

    # --- idempotency keys ---

    def idempotency_get(self, key: str) -> dict[str, Any] | None:
        """``{"path", "requestHash", "response", "at"}`` stored for ``key``."""
        records = self.load(IDEMPOTENCY, {})
        record = records.get(key) if isinstance(records, dict) else None
        return record if isinstance(record, dict) else None

    def idempotency_put(self, key: str, *, path: str, request_hash: str,
                        response: dict[str, Any]) -> None:
        with self.lock():
            records = self.load(IDEMPOTENCY, {})
            if not isinstance(records, dict):
                records = {}
            records.pop(key, None)
            records[key] = {"path": path, "requestHash": request_hash,
                            "response": response, "at": time.time()}
            while len(records) > MAX_IDEMPOTENCY_KEYS:
                records.pop(next(iter(records)))
            self.save(IDEMPOTENCY, records)


def _flock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
