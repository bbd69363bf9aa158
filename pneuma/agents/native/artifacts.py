"""``ArtifactService``: screenshots, HTML and page text, stored by reference.

Artifacts live under ``W/.pneuma/artifacts/`` (outside the file sandbox:
the viewer never lists them) as ``<id><ext>`` plus ``<id>.json`` metadata.
They are served at ``/api/artifacts/<id>``, behind the session token like
every route. Browser clients upload with ``POST /api/artifacts`` and return
only ``{artifactId, url}`` in their action results, so large payloads never
travel through the action channel.
"""

from __future__ import annotations

import json
import re
import secrets
import stat
import time
from pathlib import Path
from typing import Any

from pneuma.api import read_state_bytes, write_state_bytes

EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "text/html": ".html",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "application/json": ".json",
}
_ID = re.compile(r"^art_[a-z0-9_]{4,40}$")
MAX_ARTIFACT_BYTES = 64 * 1024 * 1024


class ArtifactError(ValueError):
    pass


class ArtifactService:
    def __init__(self, root: Path, url_prefix: str = "/api/artifacts") -> None:
        self.root = root
        self.url_prefix = url_prefix.rstrip("/")

    @classmethod
    def for_workspace(cls, workspace: Path) -> ArtifactService:
        return cls(workspace / ".pneuma" / "artifacts")

    def url(self, artifact_id: str) -> str:
        return f"{self.url_prefix}/{artifact_id}"

    def save(self, data: bytes, content_type: str, *, kind: str = "file",
             task_id: str | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        content_type = content_type.split(";")[0].strip().lower() or "application/octet-stream"
        if len(data) > MAX_ARTIFACT_BYTES:
            raise ArtifactError(f"an artifact may hold at most {MAX_ARTIFACT_BYTES} bytes")
        safe_kind = re.sub(r"[^a-z0-9]", "", kind.lower())[:16] or "file"
        artifact_id = f"art_{safe_kind}_{time.strftime('%Y%m%d%H%M%S')}_{secrets.token_hex(4)}"
        ext = EXTENSIONS.get(content_type, ".bin")
        path = self.root / f"{artifact_id}{ext}"
        # Under .pneuma/: never through a link (pneuma.core.state_files).
        write_state_bytes(path, data)
        info = {"artifactId": artifact_id, "kind": safe_kind, "contentType": content_type,
                "size": len(data), "file": path.name, "taskId": task_id,
                "createdAt": time.time(), **(meta or {})}
        write_state_bytes(self.root / f"{artifact_id}.json", json.dumps(info).encode("utf-8"))
        return {**info, "url": self.url(artifact_id)}

    def save_text(self, text: str, content_type: str = "text/plain", **kwargs: Any) -> dict[str, Any]:
        return self.save(text.encode("utf-8"), content_type, **kwargs)

    def info(self, artifact_id: str) -> dict[str, Any] | None:
        if not _ID.match(artifact_id):
            return None
        meta = self.root / f"{artifact_id}.json"
        try:
            info = json.loads(read_state_bytes(meta, 1024 * 1024))
        except (OSError, ValueError):
            return None
        if not isinstance(info, dict):
            return None
        return {**info, "url": self.url(artifact_id)}

    def path(self, artifact_id: str) -> Path | None:
        info = self.info(artifact_id)
        if info is None:
            return None
        name = info.get("file")
        # The record names a file beside it, never another place.
        if not isinstance(name, str) or not name.startswith(artifact_id) or "/" in name:
            return None
        path = self.root / name
        try:
            return path if stat.S_ISREG(path.lstat().st_mode) else None
        except OSError:
            return None

    def read(self, artifact_id: str) -> bytes | None:
        path = self.path(artifact_id)
        if path is None:
            return None
        try:
            return read_state_bytes(path)
        except OSError:
            return None
