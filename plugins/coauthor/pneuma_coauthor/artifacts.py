"""ArtifactStore: the workspace's files as the workflow sees them (a port;
docs/design/coauthor.md, "Agent host").

Reads return text plus the revision of the exact bytes read, so a patch is
always computed against a known revision; writes are atomic (temp file,
fsync, rename) so a crash mid-apply never leaves half a section.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from wcmatch import glob as wcglob

from pneuma_coauthor.domain.model import NO_REVISION, revision_of

# Files the watcher reports and the context builder may list (docs/design/coauthor.md, "File changes").
WATCHED = ["**/*.tex", "OUTLINE.md", "BRIEF.md", "STYLE.md"]
IGNORED = [".pneuma/**", "build/**", "out/**", ".git/**", "node_modules/**"]
_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB


class PathOutsideWorkspace(ValueError):
    pass


def is_watched(rel: str) -> bool:
    return wcglob.globmatch(rel, WATCHED, flags=_FLAGS) and not wcglob.globmatch(rel, IGNORED, flags=_FLAGS)


class ArtifactStore:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def resolve(self, rel: str) -> Path:
        path = (self.root / rel).resolve()
        if path != self.root and self.root not in path.parents:
            raise PathOutsideWorkspace(f"{rel} is outside the workspace")
        if wcglob.globmatch(rel, [".pneuma/**", ".git/**"], flags=_FLAGS):
            raise PathOutsideWorkspace(f"{rel} is not a paper file")
        return path

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    def read_bytes(self, rel: str) -> bytes | None:
        path = self.resolve(rel)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None

    def read(self, rel: str) -> tuple[str | None, str]:
        """(text, revision) of one consistent read; (None, 'none') if absent."""
        data = self.read_bytes(rel)
        if data is None:
            return None, NO_REVISION
        return data.decode("utf-8"), revision_of(data)

    def revision(self, rel: str) -> str:
        return revision_of(self.read_bytes(rel))

    def exists(self, rel: str) -> bool:
        return self.resolve(rel).is_file()

    def write(self, rel: str, text: str | None) -> str:
        """Atomically replace (or, with None, delete) a file; returns its new revision."""
        path = self.resolve(rel)
        if text is None:
            path.unlink(missing_ok=True)
            return NO_REVISION
        data = text.encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        # A short temp name (".pneuma.<8>.tmp", the watcher's pattern): one
        # built from the file's own name would not fit NAME_MAX for long names.
        fd, tmp = tempfile.mkstemp(prefix=".pneuma.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o777)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return revision_of(data)

    def list_files(self, patterns: list[str] | None = None) -> list[str]:
        found = wcglob.glob(patterns or WATCHED, root_dir=str(self.root), flags=_FLAGS, exclude=IGNORED)
        return sorted(p for p in found if (self.root / p).is_file())

    def newest(self, patterns: list[str]) -> str | None:
        files = self.list_files(patterns)
        return max(files, key=lambda p: (self.root / p).stat().st_mtime_ns) if files else None
