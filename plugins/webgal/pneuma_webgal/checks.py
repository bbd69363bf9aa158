"""The webgal mode's check after every turn (docs/checks.md): the script
validator (validate.py, the same one the agent's ``validate_script`` tool
runs) on every scene the turn changed, against the resources of the game
folder the scene belongs to. What breaks or misbehaves when played is an
error; what plays but probably not as meant (a missing ``;``, a duplicate
label) is a warning. Messages are in English: the agent reads them in a
repair turn."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from pneuma.api import CheckRequest, Problem, Sandbox, ToolError, TurnCheck

from .resources import GameIndex, build_index, game_root_for
from .script import parse_scene
from .validate import diagnose_scene

MAX_SCENE_BYTES = 4 * 1024 * 1024  # a scene is text; anything bigger is not one
MAX_PROBLEMS_PER_SCENE = 30


def is_scene(path: str) -> bool:
    """A scene script: ``<game>/scene/<name>.txt``."""
    parts = PurePosixPath(path).parts
    return path.lower().endswith(".txt") and "scene" in parts[:-1]


def check_scenes(workspace: Path, changed: Sequence[str]) -> list[Problem]:
    """The validator's diagnostics of each changed scene, with file and line."""
    sandbox = Sandbox(workspace)
    indexes: dict[Path, GameIndex] = {}
    problems: list[Problem] = []
    for path in (p for p in changed if is_scene(p)):
        try:
            data, _ = sandbox.read_bytes(path, MAX_SCENE_BYTES)
        except FileNotFoundError:
            continue  # removed since the turn ended
        except (ToolError, OSError) as error:
            problems.append(Problem(f"{path} cannot be read: {getattr(error, 'message', error)}", file=path))
            continue
        if len(data) > MAX_SCENE_BYTES or b"\x00" in data:
            problems.append(Problem(f"{path} is not a text scene (binary, or over 4 MiB)", file=path))
            continue
        root = game_root_for(workspace, path)
        index = indexes.get(root) or indexes.setdefault(root, build_index(root))
        scene = parse_scene(data.decode("utf-8", "replace"), PurePosixPath(path).name)
        for diagnostic in diagnose_scene(scene, index, language="en")[:MAX_PROBLEMS_PER_SCENE]:
            hint = f" ({diagnostic.fix_hint})" if diagnostic.fix_hint else ""
            problems.append(Problem(
                f"{path}, line {diagnostic.line}: {diagnostic.kind}: {diagnostic.message}{hint}",
                file=path, line=diagnostic.line, severity="error" if diagnostic.breaks else "warning",
                locate={"file": path, "line": diagnostic.line}))
    return problems


def _run(request: CheckRequest) -> list[Problem]:
    return check_scenes(request.workspace, request.changed)


CHECKS = [TurnCheck(mode="webgal", name="script",
                    label={"en": "Scene scripts", "zh-CN": "场景脚本"}, run=_run)]
