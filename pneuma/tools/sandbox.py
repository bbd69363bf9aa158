"""The one sandbox every file access goes through: HTTP routes, tools, MCP.

Paths are relative to the workspace root. Refused with ``E_DENY_PATH``:
absolute paths (POSIX, Windows drive or UNC), ``..`` segments, backslashes,
NUL and control characters, forbidden directories (``.git``,
``node_modules``, ``.env*``, ``.pneuma`` unless allowed), and anything whose
real location (symlinks resolved) lies outside the root.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from pneuma.tools.errors import ToolError

DEFAULT_FORBIDDEN: tuple[str, ...] = (".git", "node_modules", ".env*", ".pneuma")

_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _segment_forbidden(segment: str, patterns: Iterable[str]) -> str | None:
    for pattern in patterns:
        if pattern.endswith("*"):
            if segment.startswith(pattern[:-1]):
                return pattern
        elif segment == pattern:
            return pattern
    return None


class Sandbox:
    """Maps workspace-relative paths to real paths inside ``root``, or refuses."""

    def __init__(self, root: Path, forbidden: Iterable[str] = DEFAULT_FORBIDDEN):
        self.root = Path(root).resolve()
        self.forbidden = tuple(forbidden)

    def normalize(self, rel: object, *, allow_root: bool = False) -> str:
        """Check a relative path's text and return it in canonical POSIX form."""
        if not isinstance(rel, str):
            raise ToolError("E_BAD_ARGS", "path must be a string", details={"path": rel})
        if rel == "" or rel in {".", "./"}:
            if allow_root:
                return ""
            raise ToolError("E_BAD_ARGS", "path must not be empty", details={"path": rel})
        if _CONTROL.search(rel):
            raise self._deny(rel, "contains control characters")
        if "\\" in rel:
            raise self._deny(rel, "contains a backslash; use '/'")
        if rel.startswith("/") or _WINDOWS_ABSOLUTE.match(rel):
            raise self._deny(rel, "is absolute; paths are relative to the workspace")
        # Compatibility forms (full-width dots and slashes) are not path
        # syntax for the OS, but a name that normalises to '..' is refused
        # anyway so no later normalisation can turn it into one.
        segments = [s for s in rel.split("/") if s not in ("", ".")]
        for segment in segments:
            if segment == ".." or unicodedata.normalize("NFKC", segment) in {"..", "."}:
                raise self._deny(rel, "contains '..'")
            hit = _segment_forbidden(segment, self.forbidden)
            if hit is not None:
                raise self._deny(rel, f"is inside a forbidden directory ({hit})")
        if not segments:
            if allow_root:
                return ""
            raise ToolError("E_BAD_ARGS", "path must not be empty", details={"path": rel})
        return "/".join(segments)

    def resolve(self, rel: object, *, allow_root: bool = False) -> Path:
        """The real path for ``rel``; it need not exist, but whatever part of
        it exists must not lead outside the root through a symlink."""
        canonical = self.normalize(rel, allow_root=allow_root)
        candidate = self.root / PurePosixPath(canonical) if canonical else self.root
        real = Path(os.path.realpath(candidate))
        if real != self.root and self.root not in real.parents:
            raise self._deny(str(rel), "leads outside the workspace through a symlink")
        # A symlink inside the workspace that points at a forbidden directory
        # is refused as if the path named it.
        if real != self.root:
            for segment in real.relative_to(self.root).parts:
                hit = _segment_forbidden(segment, self.forbidden)
                if hit is not None:
                    raise self._deny(str(rel), f"resolves into a forbidden directory ({hit})")
        return candidate

    def relative(self, path: Path) -> str:
        """The workspace-relative POSIX form of a path inside the root."""
        return Path(path).resolve().relative_to(self.root).as_posix()

    def is_allowed(self, rel: str) -> bool:
        try:
            self.resolve(rel)
        except ToolError:
            return False
        return True

    def _deny(self, rel: str, why: str) -> ToolError:
        return ToolError(
            "E_DENY_PATH",
            f"Path {rel!r} {why}",
            details={"path": rel},
            hint="Use a path relative to the workspace root, without '..', outside "
            + ", ".join(self.forbidden),
        )
