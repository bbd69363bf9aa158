"""What is wrong with a composition, read without a browser: ``video.json``
itself, scene files that are missing, and scenes whose script moves by the
wall clock.

Time is the host's (docs/video.md, "The time rules"): a scene that animates
with ``Date.now()``, ``performance.now()``, ``setTimeout``, ``setInterval``
or ``requestAnimationFrame`` shows one picture in the player and another in
the export, so each use is a warning naming the file and line. The scan
looks inside ``<script>`` elements only, after removing comments and
strings, so a word in the scene's text or a comment is not taken for code.

The after-turn check (checks.py) and ``composition_report`` (tools.py) both
say what this module finds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma_video.composition import (
    COMPOSITION_FILE,
    Composition,
    CompositionError,
    read_composition,
    scene_path,
)

WALL_CLOCK = re.compile(r"\b(Date\.now|new\s+Date|performance\.now|setTimeout|setInterval|"
                        r"requestAnimationFrame)\b")
_SCRIPT = re.compile(r"(<script\b[^>]*>)(.*?)(</script\s*>)", re.I | re.S)
# Comments and string literals, each replaced by spaces of the same length
# (newlines kept) so offsets still give the file's lines.
_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
MAX_SCENE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Found:
    """One problem, in English, with where it is."""

    message: str
    severity: str = "error"  # "error" or "warning"
    file: str | None = None
    line: int | None = None
    locate: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "severity": self.severity, "file": self.file, "line": self.line}


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def wall_clock_uses(text: str) -> list[tuple[int, str]]:
    """(line, name) of each wall-clock call inside the scene's scripts."""
    found: list[tuple[int, str]] = []
    for script in _SCRIPT.finditer(text):
        code = _NOT_CODE.sub(_blank, script.group(2))
        start = script.start(2)
        for use in WALL_CLOCK.finditer(code):
            line = text.count("\n", 0, start + use.start()) + 1
            found.append((line, re.sub(r"\s+", " ", use.group(1))))
    return found


def scene_problems(workspace: Path, composition: Composition) -> list[Found]:
    """Missing or unreadable scene files, and wall-clock motion, scene by scene."""
    problems: list[Found] = []
    for scene in composition.scenes:
        locate = {"scene": scene.id, "time": composition.start_time(scene)}
        try:
            path = scene_path(workspace, scene)
        except CompositionError as exc:
            problems.append(Found(str(exc), file=scene.file, locate=locate))
            continue
        try:
            if path.stat().st_size > MAX_SCENE_BYTES:
                continue
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            problems.append(Found(f"{scene.label()}: its file {scene.file} does not exist",
                                  file=COMPOSITION_FILE, locate=locate))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Found(f"{scene.label()}: cannot read {scene.file}: {exc}", file=scene.file,
                                  locate=locate))
            continue
        for line, name in wall_clock_uses(text):
            problems.append(Found(
                f"{scene.file} line {line}: {name} moves by the wall clock, so the player and the export "
                f"differ; animate with pneuma.onFrame((t) => …) or a CSS animation instead",
                severity="warning", file=scene.file, line=line, locate=locate))
    if composition.width % 2 or composition.height % 2:
        problems.append(Found(f"the size {composition.width}×{composition.height} has an odd side: "
                              f"an MP4 (H.264) needs even width and height", severity="warning",
                              file=COMPOSITION_FILE))
    return problems


def composition_problems(workspace: Path) -> tuple[Composition | None, list[Found]]:
    """The composition (None when video.json is wrong) and every problem found without a browser."""
    try:
        composition = read_composition(workspace)
    except CompositionError as exc:
        return None, [Found(str(exc), file=COMPOSITION_FILE)]
    return composition, scene_problems(workspace, composition)
