"""What a built wheel brings, read from its own metadata before anything is installed."""

from __future__ import annotations

import configparser
import re
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from pneuma.core.errors import ToolError

ENTRY_POINT_GROUP = "pneuma"


@dataclass(frozen=True)
class WheelFacts:
    """A wheel's distribution, version, requirements and ``pneuma`` entry points."""

    distribution: str
    version: str
    requires: tuple[str, ...]
    entry_points: tuple[str, ...]


def canonical_name(name: str) -> str:
    """PEP 503's normal form, to compare distribution names however spelt."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_wheel(path: Path) -> WheelFacts:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            info = _dist_info(names, path)
            metadata = HeaderParser().parsestr(
                archive.read(f"{info}/METADATA").decode("utf-8", "replace"))
            entry_points = (archive.read(f"{info}/entry_points.txt").decode("utf-8", "replace")
                            if f"{info}/entry_points.txt" in names else "")
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise ToolError("E_INSTALL_FAILED", f"{path.name} is not a readable wheel: {exc}") from None
    return WheelFacts(
        distribution=metadata.get("Name", "").strip(),
        version=metadata.get("Version", "").strip(),
        requires=tuple(_runtime_requirements(metadata.get_all("Requires-Dist") or [])),
        entry_points=tuple(_pneuma_entry_points(entry_points)),
    )


def _dist_info(names: list[str], path: Path) -> str:
    infos = sorted({name.split("/", 1)[0] for name in names
                    if name.split("/", 1)[0].endswith(".dist-info")})
    if len(infos) != 1:
        raise KeyError(f"{len(infos)} .dist-info folders in {path.name}")
    return infos[0]


def _runtime_requirements(requires: list[str]) -> list[str]:
    # Extras' requirements (``; extra == "test"``) are not installed with the mode.
    return [req.strip() for req in requires if "extra ==" not in req.replace("extra==", "extra ==")]


def _pneuma_entry_points(text: str) -> list[str]:
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    if not parser.has_section(ENTRY_POINT_GROUP):
        return []
    return sorted(parser.options(ENTRY_POINT_GROUP))


def read_pyproject(folder: Path) -> WheelFacts | None:
    """A folder's facts from its ``pyproject.toml`` when they are all static
    there (PEP 621: name, version, dependencies, entry points), which saves
    building a wheel just to read them; None when any is dynamic or absent."""
    import tomllib

    try:
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    except (OSError, ValueError, KeyError, UnicodeDecodeError):
        return None
    dynamic = set(project.get("dynamic", []))
    if dynamic & {"version", "dependencies", "entry-points"} or not isinstance(project, dict):
        return None
    name, version = project.get("name"), project.get("version")
    groups = project.get("entry-points", {})
    dependencies = project.get("dependencies", [])
    if not (isinstance(name, str) and isinstance(version, str) and isinstance(groups, dict)
            and isinstance(dependencies, list)):
        return None
    points = groups.get(ENTRY_POINT_GROUP, {})
    return WheelFacts(name, version, tuple(str(d) for d in dependencies),
                      tuple(sorted(points)) if isinstance(points, dict) else ())
