"""What a person types after ``pneuma mode add``, read as what pip installs.

A SOURCE is a git URL (``git+https://…@v1.0``, ``git+file:///…@tag``,
``github:owner/name@ref``, or a local git repository's path with ``@ref``), a
local folder, a wheel or an sdist file, or a PyPI name (``name`` or
``name==1.2``). Reading it never touches the network: pip does that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pneuma.core.errors import ToolError

SourceKind = Literal["git", "folder", "wheel", "sdist", "pypi"]

_SDIST_SUFFIXES = (".tar.gz", ".tgz", ".zip", ".tar.bz2", ".tar.xz")
# A requirement on an index: a project name (PEP 508) and at most one version clause.
_PYPI_NAME = re.compile(
    r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*(?:==|>=|<=|~=|!=|>|<)\s*[A-Za-z0-9.*+!_-]+)?$")
_GITHUB = re.compile(r"^github:(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?(?:@(?P<ref>.+))?$")
_SCP_LIKE = re.compile(r"^git@(?P<host>[^:/]+):(?P<path>.+)$")


@dataclass(frozen=True)
class ModeSourceSpec:
    """A SOURCE, understood: its kind and the argument pip gets."""

    typed: str
    kind: SourceKind
    pip_argument: str
    editable: bool = False

    @property
    def recorded(self) -> str:
        """What is remembered as the source: the typed text, or for anything
        local its absolute form (so ``pneuma mode update`` works from anywhere)."""
        local = self.kind in ("folder", "wheel", "sdist") and not self.pip_argument.startswith(
            ("http://", "https://"))
        return self.pip_argument if local or self.pip_argument.startswith("git+file:") \
            else self.typed

    def install_arguments(self) -> list[str]:
        return ["--editable", self.pip_argument] if self.editable else [self.pip_argument]


def parse_source(source: str, *, editable: bool = False, base: Path | None = None) -> ModeSourceSpec:
    """The spec of ``source``; a SOURCE of no known kind is ``E_BAD_ARGS``."""
    typed = source.strip()
    if not typed or any(ch in typed for ch in "\n\r\0"):
        raise ToolError("E_BAD_ARGS", "give a source: a git URL, a folder, a wheel or sdist, "
                        "or a PyPI name")
    spec = _url_spec(typed) or _path_spec(typed, base or Path.cwd()) or _pypi_spec(typed)
    if spec is None and typed.startswith(("/", "./", "../", "~")):
        raise ToolError("E_NOT_FOUND", f"no such folder or file: {typed}",
                        details={"field": "source"})
    if spec is None:
        raise ToolError("E_BAD_ARGS", f"not a source pneuma can install: {typed!r} (a git URL, "
                        "a folder, a wheel or sdist, or a PyPI name)", details={"field": "source"})
    if editable and spec.kind != "folder":
        raise ToolError("E_BAD_ARGS", f"--editable needs a local folder; {typed!r} is a "
                        f"{spec.kind} source", details={"field": "editable"})
    return ModeSourceSpec(typed, spec.kind, spec.pip_argument, editable)


def _url_spec(typed: str) -> ModeSourceSpec | None:
    github = _GITHUB.match(typed)
    if github:
        ref = f"@{github['ref']}" if github["ref"] else ""
        return ModeSourceSpec(typed, "git", f"git+https://github.com/{github['repo']}.git{ref}")
    scp = _SCP_LIKE.match(typed)
    if scp:
        return ModeSourceSpec(typed, "git", f"git+ssh://git@{scp['host']}/{scp['path']}")
    if typed.startswith("git+"):
        return ModeSourceSpec(typed, "git", typed)
    if re.match(r"^(https?|ssh|git)://", typed):
        if typed.endswith(_SDIST_SUFFIXES) or typed.endswith(".whl"):
            kind: SourceKind = "wheel" if typed.endswith(".whl") else "sdist"
            return ModeSourceSpec(typed, kind, typed)
        return ModeSourceSpec(typed, "git", f"git+{typed}")
    return None


def _path_spec(typed: str, base: Path) -> ModeSourceSpec | None:
    path = _local_path(typed, base)
    if path is not None and path.is_file():
        if path.name.endswith(".whl"):
            return ModeSourceSpec(typed, "wheel", str(path))
        if path.name.endswith(_SDIST_SUFFIXES):
            return ModeSourceSpec(typed, "sdist", str(path))
        return None
    if path is not None and path.is_dir():
        return ModeSourceSpec(typed, "folder", str(path))
    # A local git repository at a ref: /path/to/repo@v1.0
    head, at, ref = typed.rpartition("@")
    repo = _local_path(head, base) if at else None
    if repo is not None and ref and (repo / ".git").exists():
        return ModeSourceSpec(typed, "git", f"git+{repo.as_uri()}@{ref}")
    return None


def _local_path(typed: str, base: Path) -> Path | None:
    """``typed`` as a path when it reads as one (it has a separator or a dot
    start, or names something that exists), else None."""
    if typed.startswith("file://"):
        typed = typed[len("file://"):]
    looks_like_path = typed.startswith((".", "/", "~")) or "/" in typed or "\\" in typed
    path = (base / Path(typed).expanduser()).resolve() if typed else None
    if path is None:
        return None
    if looks_like_path or path.exists():
        return path
    return None


def _pypi_spec(typed: str) -> ModeSourceSpec | None:
    if _PYPI_NAME.match(typed):
        return ModeSourceSpec(typed, "pypi", typed.replace(" ", ""))
    return None
