"""Which of a game folder's files a web build needs (export.py's ``web``).

The engine fetches ``./game/config.txt``, the scenes it enters and the
resources they name (``./game/<folder>/<name>``, script.py's ``references``),
and reads animations, templates and the user stylesheet by their own names.
So a build holds every scene (``game/scene/**/*.txt``), every file of
``animation/``, ``template/`` and ``tex/``, ``userStyleSheet.css``, and of the
resource folders exactly the files config.txt and the scenes name. A name
built from a variable (``ending_{route}.png``) cannot be resolved here, so its
whole folder goes in; a Live2D or Spine figure (a ``.json``/``.skel`` model)
brings the folder it is in (its textures and motions sit beside it).

Workspace content is untrusted: hidden files and links are never followed
(a link in game/ could point anywhere on the disk), and files are opened
through the sandbox (``pneuma.api.Sandbox``), which refuses an escape.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pneuma.api import Sandbox, ToolError

from .resources import SCENE_SUFFIX
from .script import Ref, parse_scene, references

# Folders the engine reads whole (by names the scripts do not spell out).
_WHOLE_FOLDERS = ("animation/", "template/", "tex/")
_ROOT_FILES = frozenset({"config.txt", "userStyleSheet.css"})
_RESOURCE_FOLDERS = frozenset({"background", "figure", "bgm", "vocal", "video"})
# config.txt keys naming resources: key -> folder (several names split by '|').
_CONFIG_REFS = {"Title_img": "background", "Title_bgm": "bgm", "Game_Logo": "background"}
_MODEL_SUFFIXES = (".json", ".skel", ".atlas")
_JUNK = frozenset({"desktop.ini", "Thumbs.db"})
_VARIABLE = re.compile(r"(?<!\\)\{[^}]*\}")


@dataclass
class GameFiles:
    """What goes into the build (paths relative to game/, sorted), what does
    not, and what the scripts name that is not there."""

    root: Path
    included: list[str]
    scenes: list[str]
    unused: list[str] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (scene:line, folder/name)

    def open(self, rel: str) -> int:
        """A read fd on game/``rel``, never through a link out of the game."""
        fd, _info = Sandbox(self.root).open_file(rel)
        return fd


def walk_game(game: Path) -> list[str]:
    """Every regular file under ``game`` (relative, sorted): hidden files,
    junk and links left out, linked folders not entered."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(game, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")
                       and not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            path = os.path.join(dirpath, name)
            if name.startswith(".") or name in _JUNK or os.path.islink(path) or not os.path.isfile(path):
                continue
            found.append(Path(path).relative_to(game).as_posix())
    return sorted(found)


def read_config(game: Path) -> dict[str, str]:
    """config.txt's ``Key:value;`` lines (the engine's own format)."""
    try:
        text = (game / "config.txt").read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return {}
    config: dict[str, str] = {}
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip():
            config[key.strip()] = value.split(";", 1)[0].strip()
    return config


def scene_files(game: Path) -> list[str]:
    """The scenes (relative to game/scene/), start.txt first, then by name."""
    names = [rel.removeprefix("scene/") for rel in walk_game(game)
             if rel.startswith("scene/") and rel.lower().endswith(SCENE_SUFFIX)]
    return sorted(names, key=lambda name: (name != "start.txt", name))


class _Wanted:
    """The resources the game names, as paths relative to game/."""

    def __init__(self, present: set[str]) -> None:
        self.present = present
        self.files: set[str] = set()
        self.folders: set[str] = set()
        self.missing: list[tuple[str, str]] = []

    def add(self, folder: str, name: str, where: str) -> None:
        name = name.split("?", 1)[0] if folder == "figure" else name
        if not name or name == "none" or "://" in name:
            return
        if _VARIABLE.search(name):
            self.folders.add(f"{folder}/")
            return
        rel = PurePosixPath(folder, name).as_posix()
        if name.lower().endswith(_MODEL_SUFFIXES):
            self.folders.add(PurePosixPath(rel).parent.as_posix() + "/")
        if rel in self.present:
            self.files.add(rel)
        elif (where, rel) not in self.missing:
            self.missing.append((where, rel))

    def holds(self, rel: str) -> bool:
        return rel in self.files or rel.startswith(tuple(self.folders))


def read_game_text(game: Path, rel: str) -> str:
    """A text file of the game (``scene/start.txt``), read through the
    sandbox; "" when it cannot be read."""
    try:
        fd, _info = Sandbox(game).open_file(rel)
    except (OSError, ToolError):
        return ""
    with os.fdopen(fd, "rb") as file:
        return file.read().decode("utf-8", errors="replace")


def _scene_refs(game: Path, scene: str) -> list[tuple[Ref, int]]:
    text = read_game_text(game, f"scene/{scene}")
    return [(ref, sentence.line) for sentence in parse_scene(text, scene).sentences
            for ref in references(sentence)]


def game_files(game: Path) -> GameFiles:
    """What of ``game`` a web build needs; see the module's docstring."""
    present = walk_game(game)
    scenes = scene_files(game)
    wanted = _Wanted(set(present))
    for key, folder in _CONFIG_REFS.items():
        for name in read_config(game).get(key, "").split("|"):
            wanted.add(folder, name.strip(), "config.txt")
    for scene in scenes:
        for ref, line in _scene_refs(game, scene):
            if ref.folder in _RESOURCE_FOLDERS:
                wanted.add(ref.folder, ref.name, f"scene/{scene}:{line}")
    scene_paths = {f"scene/{name}" for name in scenes}
    included: list[str] = []
    unused: list[str] = []
    for rel in present:
        keep = (rel in _ROOT_FILES or rel in scene_paths or rel.startswith(_WHOLE_FOLDERS)
                or wanted.holds(rel))
        (included if keep else unused).append(rel)
    return GameFiles(game, included, [f"scene/{name}" for name in scenes], unused, wanted.missing)
