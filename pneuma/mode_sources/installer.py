"""Install, update and remove modes with pip, all or nothing.

Before anything is installed the source is built into a wheel in a scratch
folder and its metadata read (which distribution, which ``pneuma`` entry
points): a package that is not a mode is refused untouched. After pip has
installed it, the mode is loaded in a fresh interpreter (``probe``) and,
unless the caller says not to, checked against the viewer contract
(``pneuma.api.check_mode``); when either fails the install is undone (the
previous version put back when there was one) and the error says why in one
line.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import importlib.metadata
import json
import os
import re
import site
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.mode_sources.installed import InstalledMode, installed_mode
from pneuma.mode_sources.pip_runner import failure, run_pip
from pneuma.mode_sources.provenance import (
    forget,
    installed_version,
    provenance_of,
    remember,
    restore_argument,
)
from pneuma.mode_sources.sources import ModeSourceSpec, parse_source
from pneuma.mode_sources.wheel_metadata import (
    WheelFacts,
    canonical_name,
    read_pyproject,
    read_wheel,
)

Progress = Callable[[str], None]
LOCK_NAME = "pneuma-mode-sources.lock"


def _quiet(_line: str) -> None:
    return None


@contextlib.contextmanager
def install_lock() -> Iterator[None]:
    """One install, update or removal at a time per environment (the CLI and
    the launcher alike): a second one is ``E_BUSY``."""
    try:
        fd = os.open(Path(sys.prefix) / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise ToolError("E_IO", f"cannot install modes into {sys.prefix}: {exc.strerror} (pneuma "
                        "installs modes into the Python environment it runs in)") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ToolError("E_BUSY", "another mode is being installed, updated or removed in "
                            "this environment; try again when it is done") from None
        yield
    finally:
        os.close(fd)


def install_mode(source: str, *, editable: bool = False, check: bool | None = None,
                 progress: Progress | None = None) -> InstalledMode:
    """Install the mode SOURCE names into the environment Pneuma runs in."""
    say = progress or _quiet
    spec = parse_source(source, editable=editable)
    with install_lock():
        return _install(spec, check, say)


def _install(spec: ModeSourceSpec, check: bool | None, say: Progress) -> InstalledMode:
    facts = inspect_source(spec, say)
    _refuse_pneumas_own(facts.distribution)
    if not facts.entry_points:
        raise ToolError("E_UNSUPPORTED", f"{facts.distribution} {facts.version} registers no "
                        "'pneuma' entry point: it is not a Pneuma mode; nothing was installed")
    way_back = restore_argument(facts.distribution)
    old_version = installed_version(facts.distribution)
    say(f"installing: {facts.distribution} {facts.version}")
    run = run_pip(["install", "--no-deps", "--force-reinstall", *spec.install_arguments()], say)
    if not run.ok:
        raise failure(run, f"installing {spec.typed}")
    try:
        missing = unmet_requirements(facts.requires)
        if missing:
            deps = run_pip(["install", *missing], say)
            if not deps.ok:
                raise failure(deps, f"installing what {facts.distribution} needs")
        say(f"loading: {facts.distribution}")
        names = _probe(facts.distribution)
        refresh_environment()
        if check is not False:
            _check(names, say)
        remember(facts.distribution, source=spec.recorded, kind=spec.kind, editable=spec.editable)
    except ToolError as exc:
        restored = _roll_back(facts.distribution, way_back, say)
        undone = (f"{facts.distribution} {old_version} is back in place" if restored
                  else "it was removed again")
        raise ToolError(exc.code, f"{exc.message}; {undone}", details=exc.details) from None
    except BaseException:
        _roll_back(facts.distribution, way_back, say)
        raise
    return _installed(names[0], facts.distribution, facts.version)


def _refuse_pneumas_own(distribution: str) -> None:
    """Pneuma and its built-in modes come with Pneuma: adding one of them
    would replace the installed one (in a checkout, its editable install)."""
    from pneuma.host.modes import BUILT_IN_DISTRIBUTIONS

    own = {canonical_name(name) for name in BUILT_IN_DISTRIBUTIONS} | {"pneuma"}
    if canonical_name(distribution) in own:
        raise ToolError("E_UNSUPPORTED", f"{distribution} comes with Pneuma; it is not added or "
                        "replaced as a mode (upgrade Pneuma instead); nothing was installed")


def inspect_source(spec: ModeSourceSpec, say: Progress) -> WheelFacts:
    """The wheel's facts: read from the file itself, or from a wheel pip builds
    of the source in a scratch folder (removed again)."""
    if spec.kind == "wheel" and Path(spec.pip_argument).is_file():
        return _named(read_wheel(Path(spec.pip_argument)), spec)
    static = read_pyproject(Path(spec.pip_argument)) if spec.kind == "folder" else None
    if static is not None:
        return _named(static, spec)
    with tempfile.TemporaryDirectory(prefix="pneuma-mode-add-") as scratch:
        say(f"collecting: {spec.typed}")
        run = run_pip(["wheel", "--no-deps", "--wheel-dir", scratch, spec.pip_argument], say)
        if not run.ok:
            raise failure(run, f"building {spec.typed}")
        wheels = sorted(Path(scratch).glob("*.whl"))
        if len(wheels) != 1:
            raise ToolError("E_INSTALL_FAILED", f"pip built {len(wheels)} wheels of {spec.typed}; "
                            "expected one")
        return _named(read_wheel(wheels[0]), spec)


def _named(facts: WheelFacts, spec: ModeSourceSpec) -> WheelFacts:
    if not facts.distribution:
        raise ToolError("E_INSTALL_FAILED", f"{spec.typed} has no distribution name in its metadata")
    return facts


def unmet_requirements(requires: tuple[str, ...]) -> list[str]:
    """The requirements this environment does not meet already (asking pip
    about met ones costs seconds per install)."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # not installed here: let pip decide about all of them
        return list(requires)
    unmet = []
    for text in requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            unmet.append(text)
            continue
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        version = installed_version(requirement.name)
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            unmet.append(text)
    return unmet


def _probe(distribution: str) -> list[str]:
    """The names of the distribution's modes, loaded in a fresh interpreter;
    a mode that does not load is ``E_INSTALL_FAILED`` with its error."""
    # Only this distribution's plugins load (PNEUMA_LOAD_PLUGINS, pneuma/host/plugins.py).
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": distribution}
    try:
        result = subprocess.run([sys.executable, "-m", "pneuma.mode_sources.probe", distribution],
                                capture_output=True, text=True, timeout=120, check=False, env=env)
    except subprocess.TimeoutExpired:
        raise ToolError("E_TIMEOUT", f"{distribution} installed but loading it took over two "
                        "minutes") from None
    try:
        found: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ToolError("E_INSTALL_FAILED", f"{distribution} installed but pneuma could not "
                        f"load it: {last}") from None
    if found["errors"]:
        raise ToolError("E_INSTALL_FAILED", f"{distribution} installed but its mode does not "
                        f"load: {found['errors'][0]}")
    names = [str(mode["name"]) for mode in found["modes"]]
    if not names:
        raise ToolError("E_INSTALL_FAILED", f"{distribution} installed but registers no mode")
    return names


def _check(names: list[str], say: Progress) -> None:
    """Refuse a mode that breaks the viewer contract (``pneuma mode check``);
    skipped while this Pneuma has no checker."""
    try:  # the checker is a package of its own (docs/mode-authors.md, "Check a mode")
        from pneuma.mode_check.run import check_mode
    except ImportError:
        say("checking: no checker in this Pneuma; skipped")
        return
    for name in names:
        say(f"checking: {name}")
        report = check_mode(name)
        if not report.ok:
            failed = [_field(r, "check") for r in report.results if not _field(r, "ok")]
            first = next((_field(r, "message") for r in report.results if not _field(r, "ok")), "")
            raise ToolError("E_CHECK_FAILED", f"{name} fails the check: {', '.join(failed)} "
                            f"({first}) (install anyway: --no-check)",
                            details={"failed": failed, "mode": name})


def _field(result: Any, key: str) -> Any:
    return result.get(key) if isinstance(result, dict) else getattr(result, key, None)


def _roll_back(distribution: str, way_back: list[str] | None, say: Progress) -> bool:
    """Undo an install: uninstall it, and put back what was there before
    (True when something was put back)."""
    say(f"removing: {distribution} (undoing the install)")
    run_pip(["uninstall", "--yes", distribution], say)
    restored = False
    if way_back is not None:
        say(f"installing: the previous {distribution} again")
        restored = run_pip(["install", "--no-deps", "--force-reinstall", *way_back], say).ok
    refresh_environment()
    return restored


def _installed(name: str, distribution: str, version: str) -> InstalledMode:
    origin = provenance_of(distribution)
    if origin is None:
        return InstalledMode(name, distribution, version, "unknown")
    return InstalledMode(name, distribution, origin.version or version, origin.source,
                         origin.commit, origin.editable)


def refresh_environment() -> None:
    """Make this process see what pip just changed: new files on sys.path,
    new ``.pth`` files (an editable install), and the modes they bring."""
    from pneuma.host.registry import reset_plugin_manager

    importlib.invalidate_caches()
    for directory in site.getsitepackages():
        site.addsitedir(directory)
    reset_plugin_manager()


def remove_mode(name: str, *, progress: Progress | None = None) -> None:
    """Uninstall the distribution of the mode ``name`` (or of the distribution so named)."""
    say = progress or _quiet
    with install_lock():
        distribution = _distribution_of(name)
        run = run_pip(["uninstall", "--yes", distribution], say)
        if not run.ok:
            raise failure(run, f"removing {distribution}")
        forget(distribution)
        refresh_environment()


def update_mode(name: str, *, check: bool | None = None,
                progress: Progress | None = None) -> tuple[InstalledMode, InstalledMode]:
    """Install the mode again from where it came from (the newest commit of
    its git ref, the newest release on PyPI); (before, after)."""
    from pneuma.host.registry import load_modes

    mode = load_modes().modes.get(name)
    if mode is None or mode.built_in or not mode.distribution:
        _distribution_of(name)  # says why in the usual words
        raise ToolError("E_NOT_FOUND", f"no installed mode named {name!r}")
    before = installed_mode(mode)
    origin = provenance_of(mode.distribution)
    source = origin.source if origin else before.source
    if source.startswith("pypi:") or (origin and origin.kind == "pypi"):
        # The newest release, not the one pinned when it was added.
        source = re.split(r"[=<>!~\s]", source.removeprefix("pypi:"), maxsplit=1)[0]
    after = install_mode(source, editable=bool(origin and origin.editable), check=check,
                         progress=progress)
    return before, after


def _distribution_of(name: str) -> str:
    quick = _distribution_by_entry_point(name)
    if quick is not None:
        return quick
    from pneuma.host.registry import load_modes

    registry = load_modes()
    mode = registry.modes.get(name)
    if mode is not None and mode.built_in:
        raise ToolError("E_UNSUPPORTED", f"{name} is a built-in mode: it comes with Pneuma and "
                        "cannot be removed or updated on its own")
    if mode is not None and mode.distribution:
        return mode.distribution
    wanted = canonical_name(name)
    for found in registry.modes.values():  # named by its distribution
        if found.distribution and canonical_name(found.distribution) == wanted:
            return _distribution_of(found.name)
    for error in registry.errors:  # a broken mode can still be removed
        if error.plugin == name or canonical_name(error.distribution or "") == wanted:
            return error.distribution or name
    raise ToolError("E_NOT_FOUND", f"no installed mode named {name!r} (see `pneuma modes`)")


def _distribution_by_entry_point(name: str) -> str | None:
    """The distribution whose ``pneuma`` entry point (or own name) is ``name``,
    without loading every mode (a generated mode's entry point is its name);
    None when that does not settle it."""
    from pneuma.host.modes import BUILT_IN_DISTRIBUTIONS

    wanted = canonical_name(name)
    for point in importlib.metadata.entry_points(group="pneuma"):
        dist = point.dist.metadata["Name"] if point.dist is not None else None
        if dist and (point.name == name or canonical_name(dist) == wanted):
            return None if dist in BUILT_IN_DISTRIBUTIONS else dist
    return None


def build_mode_wheel(folder: Path, dest: Path, *, progress: Progress | None = None) -> Path:
    """``pip wheel --no-deps`` of a mode package folder into ``dest``; the wheel's path."""
    if not (folder / "pyproject.toml").is_file() and not (folder / "setup.py").is_file():
        raise ToolError("E_NOT_FOUND", f"{folder} is not a package folder (no pyproject.toml)")
    dest.mkdir(parents=True, exist_ok=True)
    before = set(dest.glob("*.whl"))
    run = run_pip(["wheel", "--no-deps", "--wheel-dir", str(dest), str(folder)], progress)
    if not run.ok:
        raise failure(run, f"building {folder}")
    built = [line.split("filename=", 1)[1].split()[0] for line in run.output.splitlines()
             if "filename=" in line and ".whl" in line]
    if built and (dest / built[-1]).is_file():
        return dest / built[-1]
    new = sorted(set(dest.glob("*.whl")) - before) or sorted(dest.glob("*.whl"))
    if not new:
        raise ToolError("E_INSTALL_FAILED", f"pip built no wheel of {folder}")
    return new[-1]
