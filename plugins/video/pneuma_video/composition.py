"""The one reader of ``video.json``, the composition (docs/video.md, "The
file format"): its size, frame rate, background and scenes, one after
another.

Every part that needs the composition (the export, the tools, the checks,
the change describer) reads it here, so a mistake in the file is said in
one way everywhere: ``CompositionError`` with a message naming the field
("scenes[1].duration must be a number > 0"), never a KeyError.

Time: frame n is at n / fps; a scene of d seconds has round(d × fps)
frames, so a scene always starts on a whole frame and the composition's
frame count is the sum of its scenes'.
"""

from __future__ import annotations

import json
import math
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMPOSITION_FILE = "video.json"
MAX_SIDE = 7680  # 8K: larger is a typo, and a frame that big would not fit one screenshot
MAX_FPS = 120
MAX_SCENE_S = 3600  # an hour: longer is a typo, and its frame count must stay a number
_DEFAULTS = {"width": 1280, "height": 720, "fps": 30, "background": "#000000"}
# "format": "1920x1080@30" stands for width, height and fps in one field: it is
# how the init param (manifest "format") seeds the size the person chose.
_FORMAT = re.compile(r"\s*(\d+)\s*[x×]\s*(\d+)\s*@\s*(\d+(?:\.\d+)?)\s*")


class CompositionError(ValueError):
    """``video.json`` is missing or wrong; the message says where, in one line."""


@dataclass(frozen=True)
class Scene:
    """One scene: its place (``index``, 0-based), its file and its frames."""

    index: int
    id: str
    title: str
    file: str
    duration: float
    start_frame: int
    frames: int

    def label(self) -> str:
        """"Scene 2 “Chart”", as a person counts (from 1)."""
        return f"Scene {self.index + 1} “{self.title}”" if self.title else f"Scene {self.index + 1}"

    def label_zh(self) -> str:
        return f"第 {self.index + 1} 个场景“{self.title}”" if self.title else f"第 {self.index + 1} 个场景"


@dataclass(frozen=True)
class Composition:
    title: str
    width: int
    height: int
    fps: float
    background: str
    scenes: tuple[Scene, ...]

    @property
    def total_frames(self) -> int:
        return sum(scene.frames for scene in self.scenes)

    @property
    def duration(self) -> float:
        """The composition's length as its frames make it (what ffprobe reads)."""
        return self.total_frames / self.fps

    def scene_at_frame(self, frame: int) -> tuple[Scene, float]:
        """The scene frame ``frame`` falls in, and the time inside that scene."""
        for scene in self.scenes:
            if frame < scene.start_frame + scene.frames:
                return scene, (max(frame, scene.start_frame) - scene.start_frame) / self.fps
        last = self.scenes[-1]
        return last, max(last.frames - 1, 0) / self.fps

    def frame_at(self, seconds: float) -> int:
        """The frame showing at ``seconds`` of the composition (the last one past the end)."""
        return min(max(int(round(seconds * self.fps)), 0), max(self.total_frames - 1, 0))

    def start_time(self, scene: Scene) -> float:
        return scene.start_frame / self.fps


def _number(value: Any, where: str, *, integer: bool = False, upper: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise CompositionError(f"{where} must be a number > 0, not {json.dumps(value)}")
    if integer and value != int(value):
        raise CompositionError(f"{where} must be a whole number, not {value}")
    if upper is not None and value > upper:
        raise CompositionError(f"{where} is {value}; at most {upper:g}")
    return float(value)


def _scene(entry: Any, index: int, fps: float, start: int) -> Scene:
    where = f"scenes[{index}]"
    if not isinstance(entry, dict):
        raise CompositionError(f"{where} must be an object with id, title, file and duration")
    file = entry.get("file")
    if not isinstance(file, str) or not file.strip():
        raise CompositionError(f"{where}.file must name the scene's HTML file (scenes/01-intro.html)")
    normal = posixpath.normpath(file.strip())
    if normal.startswith(("/", "../")) or normal == "..":
        raise CompositionError(f"{where}.file {file!r} must be inside the workspace")
    duration = _number(entry.get("duration"), f"{where}.duration", upper=MAX_SCENE_S)
    frames = max(1, int(round(duration * fps)))
    scene_id = entry.get("id")
    title = entry.get("title", "")
    return Scene(index=index, id=str(scene_id) if scene_id not in (None, "") else f"scene-{index + 1}",
                 title=str(title) if title is not None else "", file=normal, duration=duration,
                 start_frame=start, frames=frames)


def _format_fields(data: dict[str, Any]) -> dict[str, Any]:
    """width, height and fps from ``format`` ("1920x1080@30"), when it is given."""
    if "format" not in data:
        return {}
    given = [key for key in ("width", "height", "fps") if key in data]
    if given:
        raise CompositionError(f"format and {', '.join(given)} are both given: keep one way of saying the size")
    match = _FORMAT.fullmatch(str(data["format"]))
    if match is None:
        raise CompositionError(f"format must be WIDTHxHEIGHT@FPS such as \"1920x1080@30\", "
                               f"not {json.dumps(data['format'])}")
    fps = float(match.group(3))
    return {"width": int(match.group(1)), "height": int(match.group(2)), "fps": int(fps) if fps.is_integer() else fps}


def parse_composition(data: Any) -> Composition:
    """A composition from ``video.json``'s parsed JSON; ``CompositionError`` naming the field."""
    if not isinstance(data, dict):
        raise CompositionError(f"{COMPOSITION_FILE} must hold one JSON object")
    values = {**_DEFAULTS, **_format_fields(data), **data}
    width = int(_number(values["width"], "width", integer=True, upper=MAX_SIDE))
    height = int(_number(values["height"], "height", integer=True, upper=MAX_SIDE))
    fps = _number(values["fps"], "fps", upper=MAX_FPS)
    scenes_data = values.get("scenes")
    if not isinstance(scenes_data, list) or not scenes_data:
        raise CompositionError("scenes must be a list of at least one scene")
    scenes: list[Scene] = []
    start = 0
    ids: set[str] = set()
    for index, entry in enumerate(scenes_data):
        scene = _scene(entry, index, fps, start)
        if scene.id in ids:
            raise CompositionError(f"scenes[{index}].id {scene.id!r} is used twice; each scene needs its own id")
        ids.add(scene.id)
        scenes.append(scene)
        start += scene.frames
    background = values.get("background")
    return Composition(title=str(values.get("title") or ""), width=width, height=height, fps=fps,
                       background=background if isinstance(background, str) else "#000000",
                       scenes=tuple(scenes))


def composition_from_text(text: str) -> Composition:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CompositionError(f"{COMPOSITION_FILE} is not valid JSON: {exc.msg} "
                               f"(line {exc.lineno}, column {exc.colno})") from None
    return parse_composition(data)


def scene_path(workspace: Path, scene: Scene) -> Path:
    """The scene's file, refused (``CompositionError``) when it is a link that leads
    outside the workspace: its text would be drawn into the video."""
    root = workspace.resolve()
    path = (root / scene.file).resolve()
    if not path.is_relative_to(root):
        raise CompositionError(f"{scene.label()}: its file {scene.file} leads outside the workspace")
    return path


def read_composition(workspace: Path) -> Composition:
    """The workspace's composition; ``CompositionError`` when the file is missing or wrong."""
    path = workspace / COMPOSITION_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CompositionError(f"no {COMPOSITION_FILE} in {workspace}: this is not a video workspace") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CompositionError(f"cannot read {COMPOSITION_FILE}: {exc}") from None
    return composition_from_text(text)
