"""Handlers of the WebGAL mode's own tools (named in manifest.json):
validate_script, list_project_resources, preview_scene and
generate_character_profile.

The manifest names the host's generic handlers for the rest (the file tools
in ``pneuma.tools.builtin_files``, ``get_runtime_info``, the interaction
signals, ``execute_command`` and ``browser_action``). Each handler is
``handler(ctx, args) -> dict`` and raises ``ToolError`` with one of the
contract's codes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

from pneuma.api import ToolContext, ToolError, atomic_write_text, read_text

from .preview import preview_scene_url
from .resources import build_index, game_root_for, list_resources
from .script import parse_scene
from .validate import diagnose_scene

CHARACTERS_FILE = "game/characters.json"


# --- helpers --------------------------------------------------------------------


def diagnostics_language(ctx: ToolContext, args: dict[str, Any] | None = None) -> str:
    """Chinese by default; English when the request, the environment
    (PNEUMA_WEBGAL_LANG=EN; docs/design/tool-contract.md, "Diagnostics language"), the workspace's
    ``language`` param or the policy says so."""
    candidates = [
        (args or {}).get("language"),
        os.environ.get("PNEUMA_WEBGAL_LANG"),
        ctx.params.get("language") if isinstance(ctx.params, dict) else None,
        ctx.policies.get("language") if isinstance(ctx.policies, dict) else None,
    ]
    for value in candidates:
        if isinstance(value, str) and value.strip():
            return "en" if value.strip().lower().startswith("en") else "zh-CN"
    return "zh-CN"


def _game_root(ctx: ToolContext) -> Path:
    return game_root_for(ctx.workspace)


# --- validate_script ------------------------------------------------------------


def validate_script(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    language = diagnostics_language(ctx, args)
    if "path" in args:
        canonical = ctx.sandbox.normalize(args["path"])
        text, _ = read_text(ctx, canonical)
        game_root = game_root_for(ctx.workspace, canonical)
        name = PurePosixPath(canonical).name
    else:
        text = args.get("content", "")
        game_root = _game_root(ctx)
        name = "content.txt"
    if "\x00" in text:
        raise ToolError(
            "E_PARSE_FAIL",
            "the script contains NUL bytes: it is not a text scene",
            details={"path": args.get("path")},
            hint="Scene scripts are UTF-8 text files in game/scene/.",
        )
    try:
        scene = parse_scene(text, name)
        diagnostics = diagnose_scene(scene, build_index(game_root), language=language)
    except ToolError:
        raise
    except Exception as exc:  # a validator bug must not look like a verdict on the script
        raise ToolError("E_LINT_FAIL", f"validation could not run: {type(exc).__name__}: {exc}",
                        details={"path": args.get("path")}) from exc
    return {
        "valid": not any(d.breaks for d in diagnostics),
        "diagnostics": [d.to_dict() for d in diagnostics],
    }


# --- list_project_resources ------------------------------------------------------


def list_project_resources(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    ctx.sandbox.resolve("game")  # refuses a game/ that is a symlink out of the workspace
    return list_resources(build_index(_game_root(ctx)))


# --- preview_scene ----------------------------------------------------------------


def _scene_file(ctx: ToolContext, scene_path: str | None) -> tuple[str, str]:
    """(file name relative to game/scene/, workspace-relative path) of the scene to preview."""
    if not scene_path:
        rel = "game/scene/start.txt"
    else:
        text = scene_path.strip()
        if text.startswith("game/"):
            rel = text
        elif text.startswith("scene/"):
            rel = "game/" + text
        else:
            rel = "game/scene/" + text
        if not rel.endswith(".txt"):
            rel += ".txt"
    canonical = ctx.sandbox.normalize(rel)
    path = ctx.sandbox.resolve(canonical)
    if not canonical.startswith("game/scene/"):
        raise ToolError("E_BAD_ARGS", f"{scene_path!r} is not a scene in game/scene/",
                        details={"field": "scenePath", "scenePath": scene_path},
                        hint="Give a scene file such as game/scene/start.txt or start.txt.")
    if not path.is_file():
        scenes = list_resources(build_index(_game_root(ctx)))["scenes"]
        raise ToolError("E_NOT_FOUND", f"Scene not found: {canonical}",
                        details={"path": canonical, "scenes": scenes[:50]},
                        hint="Scenes in this game: " + (", ".join(scenes[:10]) or "none"))
    return canonical[len("game/scene/"):], canonical


async def preview_scene(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    scene_file, canonical = _scene_file(ctx, args.get("scenePath"))
    logs: list[str] = []
    result: dict[str, Any] = {}

    # Problems the person will see when it plays.
    text, _ = read_text(ctx, canonical)
    scene_lines = len(text.replace("\r", "").split("\n"))
    line = min(max(1, int(args.get("line", 1))), scene_lines)
    diagnostics = diagnose_scene(parse_scene(text, scene_file), build_index(_game_root(ctx)),
                                 language=diagnostics_language(ctx))
    breaking = [d for d in diagnostics if d.breaks]
    if breaking:
        result["firstErrorLine"] = breaking[0].line
        logs.append(f"validate_script: {len(breaking)} problem(s) that show when played; first on line "
                    f"{breaking[0].line}: {breaking[0].message}")
    result["url"] = await preview_scene_url(ctx, scene_file, line, logs)
    result["logs"] = logs
    return result


# --- generate_character_profile ---------------------------------------------------


def generate_character_profile(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    name = args["name"].strip()
    if not name:
        raise ToolError("E_BAD_ARGS", "name must not be blank", details={"field": "name"})
    image = args["imageFile"].strip()
    if image.startswith("game/figure/"):
        image = image[len("game/figure/"):]
    canonical = ctx.sandbox.normalize("game/figure/" + image)
    path = ctx.sandbox.resolve(canonical)
    if not path.is_file():
        index = build_index(_game_root(ctx))
        near = index.near("figure", image)
        raise ToolError("E_NOT_FOUND", f"Figure image not found: {canonical}",
                        details={"path": canonical, "near": near},
                        hint=("Similar figures: " + ", ".join(near)) if near
                        else "Add the image to game/figure/ first, or use list_project_resources.")
    entry: dict[str, Any] = {"name": name, "imageFile": canonical[len("game/figure/"):]}
    if args.get("defaultExpression"):
        entry["defaultExpression"] = args["defaultExpression"]

    ctx.sandbox.resolve(CHARACTERS_FILE)
    try:
        old_text, _ = read_text(ctx, CHARACTERS_FILE)
    except ToolError as exc:
        if exc.code != "E_NOT_FOUND":
            raise
        old_text = None
    data: dict[str, Any] = {"characters": []}
    if old_text is not None:
        try:
            data = json.loads(old_text)
        except ValueError:
            raise ToolError("E_PARSE_FAIL", f"{CHARACTERS_FILE} is not valid JSON",
                            details={"path": CHARACTERS_FILE},
                            hint="Fix or restore the file (list_snapshots) before adding characters.") from None
        if not isinstance(data, dict) or not isinstance(data.get("characters"), list):
            raise ToolError("E_PARSE_FAIL", f"{CHARACTERS_FILE} must be an object with a 'characters' list",
                            details={"path": CHARACTERS_FILE})
    for existing in data["characters"]:
        if isinstance(existing, dict) and existing.get("name") == name:
            if existing == entry:
                return {"success": True}
            raise ToolError("E_CONFLICT", f"a character named {name!r} already exists with another profile",
                            details={"path": CHARACTERS_FILE, "existing": existing, "requested": entry},
                            hint="Use another name, or edit game/characters.json through write_to_file.")
    data["characters"].append(entry)
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if old_text is not None:
        ctx.snapshots.create(CHARACTERS_FILE, old_text, "generate_character_profile")
    atomic_write_text(ctx, CHARACTERS_FILE, text)
    return {"success": True}
