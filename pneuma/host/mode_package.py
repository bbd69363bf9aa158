"""A new mode package written into a folder of one's choosing
(``pneuma.api.generate_mode_package``): the mode-maker seeds its workspace
with it, so the workspace itself is the package (docs/mode-maker.md).

The package is what ``pneuma new-mode`` makes: that command is run (a
child process, a fraction of a second) rather than imported, since the
front ends sit floors above the host (docs/architecture.md). When asked to
fork, the template's Python package is then replaced with a copy of an
installed mode's package, renamed. Nothing already in the folder is
overwritten: a file that exists is kept and reported as skipped.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pneuma.core.errors import ToolError

# Build output and caches never travel with a fork.
_LEFT_OUT = {"__pycache__", ".pytest_cache", "node_modules"}
_TEXT_SUFFIXES = {".py", ".json", ".md", ".js", ".css", ".html", ".txt", ".toml"}


@dataclass(frozen=True)
class GeneratedPackage:
    """What ``generate_mode_package`` wrote: the folder, the mode's names,
    the files written and those kept because they were there already."""

    folder: Path
    name: str
    package: str
    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def generate_mode_package(dest: Path, name: str, *, fork_from: str | None = None) -> GeneratedPackage:
    """Write a complete mode package for mode ``name`` into ``dest`` (its
    ``pyproject.toml`` at ``dest``'s top). ``fork_from``: an installed mode
    whose package files replace the template's, renamed to ``name``.

    Raises ``ToolError`` ``E_BAD_ARGS`` for an invalid name or an unknown
    mode to fork, ``E_IO`` when the folder cannot be written.
    """
    source = _installed_package(fork_from) if fork_from else None
    dest = Path(dest)
    with tempfile.TemporaryDirectory(prefix="pneuma-mode-package-") as scratch:
        project = _new_mode(name, Path(scratch))
        names = _names(project)
        if source is not None:
            _replace_package(project / names.package, source, names)
        result = GeneratedPackage(folder=dest, name=names.name, package=names.package)
        _move_new(project, dest, result)
    return result


@dataclass(frozen=True)
class _Names:
    name: str
    package: str
    distribution: str


def _new_mode(name: str, scratch: Path) -> Path:
    """``pneuma new-mode name=NAME`` into ``scratch``: the project folder,
    or its one error line as ``E_BAD_ARGS``."""
    done = subprocess.run(
        [sys.executable, "-m", "pneuma", "new-mode", f"name={name}", "--no-input", "-o", str(scratch / "out")],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = next((line.removeprefix("pneuma: error: ") for line in lines if line.startswith("pneuma: error:")),
                      lines[-1] if lines else f"pneuma new-mode exited with {done.returncode}")
        raise ToolError("E_BAD_ARGS", reason)
    projects = [path for path in (scratch / "out").iterdir() if path.is_dir()]
    if len(projects) != 1:
        raise ToolError("E_IO", f"pneuma new-mode made no package for {name!r}")
    return projects[0]


def _names(project: Path) -> _Names:
    """The mode's names as the template wrote them into pyproject.toml."""
    table = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    ((mode, package),) = table["entry-points"]["pneuma"].items()
    return _Names(name=mode, package=package.split(".")[0], distribution=table["name"])


def _installed_package(mode_name: str) -> tuple[Path, str]:
    """The package folder of installed mode ``mode_name`` and its Python package name."""
    from pneuma.host.registry import get_mode

    try:
        mode = get_mode(mode_name)
    except Exception as exc:  # UnknownModeError and a broken plugin alike: one line
        raise ToolError("E_BAD_ARGS", f"cannot fork mode {mode_name!r}: {exc}") from None
    return mode.package_dir, mode.package_dir.name


def _replace_package(target: Path, source: tuple[Path, str], names: _Names) -> None:
    folder, old_package = source
    shutil.rmtree(target)
    shutil.copytree(folder, target, ignore=lambda _dir, entries: [e for e in entries if e in _LEFT_OUT])
    old_name = _manifest_name(target / "manifest.json")
    for path in target.rglob("*"):
        if path.is_file() and path.suffix in _TEXT_SUFFIXES:
            _rename_in(path, old_package, old_name, names)


def _manifest_name(manifest: Path) -> str | None:
    import json

    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def _rename_in(path: Path, old_package: str, old_name: str | None, names: _Names) -> None:
    """The forked mode's own names become the new mode's: its Python
    package everywhere, its mode name and skill folder in the manifest."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    new = re.sub(rf"\b{re.escape(old_package)}\b", names.package, text)
    if path.name == "manifest.json" and old_name:
        new = re.sub(rf'"name": "{re.escape(old_name)}"', f'"name": "{names.name}"', new, count=1)
        old_skill = f"pneuma-{old_name.replace('_', '-')}"
        new = new.replace(f'"installName": "{old_skill}"', f'"installName": "{names.distribution}"')
    if new != text:
        path.write_text(new, encoding="utf-8")


def _move_new(project: Path, dest: Path, result: GeneratedPackage) -> None:
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for path in sorted(project.rglob("*")):
            if not path.is_file():
                continue
            rel = path.relative_to(project)
            target = dest / rel
            # A link planted in the folder must not carry a write outside it.
            inside = target.parent.resolve().is_relative_to(dest.resolve())
            if rel.as_posix() == ".gitignore" and inside and target.is_file() and not target.is_symlink():
                _merge_lines(path, target)  # the folder's ignores stay, the template's join them
                result.written.append(rel.as_posix())
                continue
            if target.exists() or target.is_symlink() or not inside:
                result.skipped.append(rel.as_posix())
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            result.written.append(rel.as_posix())
    except OSError as exc:
        raise ToolError("E_IO", f"cannot write the mode package into {dest}: "
                                f"{exc.strerror or exc}") from None


def _merge_lines(source: Path, target: Path) -> None:
    """``target`` with the lines of ``source`` it lacks appended, written atomically."""
    have = target.read_text(encoding="utf-8", errors="surrogateescape")
    missing = [line for line in source.read_text(encoding="utf-8").splitlines()
               if line.strip() and line not in have.splitlines()]
    if not missing:
        return
    text = have + ("" if not have or have.endswith("\n") else "\n") + "\n".join(missing) + "\n"
    scratch = target.with_name(f".{target.name}.pneuma-tmp")
    scratch.write_text(text, encoding="utf-8", errors="surrogateescape")
    scratch.replace(target)
