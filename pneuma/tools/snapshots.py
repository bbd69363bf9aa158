"""Snapshots of workspace files, for every mode (docs/design/tool-contract.md, "Snapshots").

Each snapshot is ``<id>.txt`` (the text) and ``<id>.meta.json`` under
``W/.pneuma/snapshots/<mode>/``, with ``id = snap_YYYYMMDDThhmmss_<8hex>``
(UTC time, random suffix). The text is written first and the metadata last,
both atomically, so a snapshot is listed only once it is complete. Only the
newest ``snapshotRetention`` snapshots of each file are kept (0: all).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.core.files import atomic_write_bytes, content_hash

SNAPSHOT_ID = re.compile(r"^snap_\d{8}T\d{6}_[0-9a-f]{8}$")
DEFAULT_RETENTION = 50


class SnapshotStore:
    def __init__(self, directory: Path, retention: int = DEFAULT_RETENTION):
        self.directory = Path(directory)
        self.retention = retention

    def create(self, rel: str, text: str, reason: str, *, idempotency_key: str | None = None,
               existed: bool = True) -> str:
        now = time.time()
        stamp = datetime.fromtimestamp(now, tz=timezone.utc).strftime("%Y%m%dT%H%M%S")
        while True:
            snapshot_id = f"snap_{stamp}_{secrets.token_hex(4)}"
            if not (self.directory / f"{snapshot_id}.meta.json").exists():
                break
        data = text.encode("utf-8")
        meta: dict[str, Any] = {
            "id": snapshot_id,
            "path": rel,
            "contentHash": content_hash(text),
            "createdAt": datetime.fromtimestamp(now, tz=timezone.utc).isoformat(
                timespec="milliseconds").replace("+00:00", "Z"),
            "timestamp": int(now * 1000),
            "reason": reason,
            "size": len(data),
            "existed": existed,
        }
        if idempotency_key is not None:
            meta["idempotencyKey"] = idempotency_key
        try:
            atomic_write_bytes(self.directory / f"{snapshot_id}.txt", data)
            atomic_write_bytes(self.directory / f"{snapshot_id}.meta.json",
                               json.dumps(meta, ensure_ascii=False, indent=1).encode("utf-8"))
        except OSError as exc:
            # strerror, not str(exc): that names the absolute path on disk.
            raise ToolError("E_IO", f"Cannot store a snapshot of {rel}: "
                            f"{exc.strerror or 'I/O error'}",
                            details={"path": rel}) from None
        self.prune(rel)
        return snapshot_id

    def _all(self) -> list[dict[str, Any]]:
        """Every complete, readable snapshot's metadata (broken ones skipped)."""
        if not self.directory.is_dir():
            return []
        out = []
        for meta_path in self.directory.glob("snap_*.meta.json"):
            snapshot_id = meta_path.name[: -len(".meta.json")]
            if not SNAPSHOT_ID.match(snapshot_id):
                continue
            if not (self.directory / f"{snapshot_id}.txt").is_file():
                continue
            try:
                meta = json.loads(meta_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not _valid_meta(meta, snapshot_id):
                continue
            out.append(meta)
        return out

    def list(self, path: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first (timestamp, then id, descending); ``path`` is a
        case-sensitive prefix filter; ``limit`` applies after filtering."""
        metas = [m for m in self._all() if path is None or m["path"].startswith(path)]
        metas.sort(key=lambda m: (m["timestamp"], m["id"]), reverse=True)
        return metas[: max(limit, 0)]

    def get(self, snapshot_id: str) -> tuple[dict[str, Any], str]:
        """``(meta, text)``; E_BAD_ARGS / E_NOT_FOUND / E_PARSE_FAIL / E_INTERNAL."""
        if not isinstance(snapshot_id, str) or not SNAPSHOT_ID.match(snapshot_id):
            raise ToolError("E_BAD_ARGS", f"{snapshot_id!r} is not a snapshot id "
                            "(snap_YYYYMMDDThhmmss_<8hex>)", details={"field": "snapshotId"})
        meta_path = self.directory / f"{snapshot_id}.meta.json"
        text_path = self.directory / f"{snapshot_id}.txt"
        if not meta_path.is_file() or not text_path.is_file():
            raise ToolError("E_NOT_FOUND", f"Snapshot not found: {snapshot_id}",
                            details={"snapshotId": snapshot_id},
                            hint="It may have been pruned; run list_snapshots.")
        try:
            raw_meta = meta_path.read_text(encoding="utf-8")
            data = text_path.read_bytes()
        except OSError as exc:
            raise ToolError("E_INTERNAL", f"Cannot read snapshot {snapshot_id}: "
                            f"{exc.strerror or 'I/O error'}",
                            details={"snapshotId": snapshot_id}) from None
        try:
            meta = json.loads(raw_meta)
        except ValueError as exc:
            raise ToolError("E_PARSE_FAIL", f"Snapshot {snapshot_id} has broken metadata: {exc}",
                            details={"snapshotId": snapshot_id}) from None
        if not _valid_meta(meta, snapshot_id):
            raise ToolError("E_PARSE_FAIL", f"Snapshot {snapshot_id} has broken metadata",
                            details={"snapshotId": snapshot_id})
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError("E_PARSE_FAIL", f"Snapshot {snapshot_id} is not UTF-8 text",
                            details={"snapshotId": snapshot_id}) from None
        return meta, text

    def prune(self, rel: str) -> list[str]:
        """Drop the oldest snapshots of ``rel`` beyond the retention."""
        if self.retention <= 0:
            return []
        mine = [m for m in self._all() if m["path"] == rel]
        mine.sort(key=lambda m: (m["timestamp"], m["id"]), reverse=True)
        dropped = []
        for meta in mine[self.retention:]:
            for suffix in (".meta.json", ".txt"):  # metadata first: never a listed orphan
                try:
                    (self.directory / f"{meta['id']}{suffix}").unlink()
                except FileNotFoundError:
                    pass
            dropped.append(meta["id"])
        return dropped


def _valid_meta(meta: Any, snapshot_id: str) -> bool:
    return (
        isinstance(meta, dict)
        and meta.get("id") == snapshot_id
        and isinstance(meta.get("path"), str)
        and isinstance(meta.get("timestamp"), (int, float))
        and not isinstance(meta.get("timestamp"), bool)
        and isinstance(meta.get("contentHash"), str)
        and re.fullmatch(r"[0-9a-f]{8}", meta["contentHash"]) is not None
    )
