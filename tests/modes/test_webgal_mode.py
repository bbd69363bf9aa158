"""The webgal mode: manifest (16 contract tools), seed game, skill install."""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path

from jsonschema.validators import Draft202012Validator

from pneuma.host.registry import get_mode
from pneuma.tools.runtime import load_handler
from pneuma.workspace.params import init_workspace
from pneuma.workspace.skill import install_skill

CONTRACT_TOOLS = [
    "list_files",
    "read_file",
    "write_to_file",
    "replace_in_file",
    "search_files",
    "list_project_resources",
    "validate_script",
    "preview_scene",
    "list_snapshots",
    "restore_snapshot",
    "get_runtime_info",
    "generate_character_profile",
    "ask_followup_question",
    "attempt_completion",
    "execute_command",
    "browser_action",
]

# The tools that are not WebGAL's own: the host's, named by the promised form.
HANDLERS = {name: f"pneuma:{name}" for name in (
    "list_files", "read_file", "write_to_file", "replace_in_file", "search_files",
    "list_snapshots", "restore_snapshot", "get_runtime_info", "ask_followup_question",
    "attempt_completion", "execute_command", "browser_action")}

# The 34 keywords the WebGAL engine registers (reference README, section 2.3).
ENGINE_COMMANDS = set(
    "say changeBg changeFigure bgm playVideo pixiPerform pixiInit intro miniAvatar "
    "changeScene choose end setComplexAnimation setFilter label jumpLabel setVar callScene "
    "showVars unlockCg unlockBgm filmMode setTextbox setAnimation playEffect setTempAnimation "
    "setTransform setTransition getUserInput applyStyle wait callSteam".split()
)
SPEAKERS = {"", "美绪", "站长", "Mio", "Stationmaster"}


def _mode():
    return get_mode("webgal")


def _seed(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    init_workspace(_mode(), workspace, {})
    return workspace


# --- a small reader of scene lines, following the engine's rules ---


def _parse_line(line: str) -> dict:
    """One physical line → {kind, command, content, args, speaker, terminated}."""
    parts = re.split(r"(?<!\\);", line)
    statement = parts[0].replace("\\;", ";")
    if not statement.strip():
        return {"kind": "comment"}
    if ":" in statement:
        raw, rest = statement.split(":", 1)
    else:
        raw, rest = statement, ""
    args: dict[str, object] = {}
    cut = rest.find(" -")
    content = (rest if cut < 0 else rest[:cut]).strip()
    if content == "none":
        content = ""  # `none` clears, for every command
    if cut >= 0:
        for piece in rest[cut:].split(" -"):
            if not piece.strip():
                continue
            name, eq, value = piece.partition("=")
            args.setdefault(name.strip(), value.strip() if eq else True)
    terminated = len(parts) > 1
    if raw in ENGINE_COMMANDS:
        if ":" not in statement:
            content = ""
        return {"kind": "command", "command": raw, "content": content, "args": args,
                "terminated": terminated}
    if ":" not in statement:
        return {"kind": "continuation", "content": statement, "terminated": terminated}
    return {"kind": "say", "speaker": raw, "content": content, "args": args,
            "terminated": terminated}


def _scene_lines(workspace: Path, scene: str) -> list[dict]:
    text = (workspace / "game" / "scene" / scene).read_text(encoding="utf-8")
    assert not text.startswith("\ufeff")
    return [_parse_line(line) for line in text.replace("\r", "").split("\n")]


def _exists(workspace: Path, folder: str, name: str) -> bool:
    # Case-sensitive, as on the web server: compare with the real directory listing.
    path = workspace / "game" / folder / name
    return path.parent.is_dir() and path.name in {p.name for p in path.parent.iterdir()}


def _png_size(data: bytes) -> tuple[int, int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "PNG signature"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    ihdr = data[16:29]
    assert struct.unpack(">I", data[29:33])[0] == zlib.crc32(b"IHDR" + ihdr) & 0xFFFFFFFF
    width, height, depth, colour = struct.unpack(">IIBB", ihdr[:10])
    assert depth == 8
    assert data.endswith(b"IEND\xaeB`\x82")
    return width, height, colour


# --- manifest ---


def test_mode_loads_with_the_contract_tools():
    manifest = _mode().manifest
    assert manifest.layout == "editor"
    assert [t.name for t in manifest.tools] == CONTRACT_TOOLS
    for tool in manifest.tools:
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.handler == HANDLERS.get(tool.name, f"pneuma_webgal.tools:{tool.name}")
        assert callable(load_handler(tool.handler))
        assert tool.description.strip()


def test_tool_schemas_enforce_the_contract():
    manifest = _mode().manifest
    write = manifest.tool("write_to_file")
    assert set(write.input_schema["required"]) == {"path", "content", "dryRun"}
    validator = Draft202012Validator(write.input_schema)
    assert validator.is_valid({"path": "game/scene/a.txt", "content": "end;", "dryRun": True})
    assert not validator.is_valid({"path": "game/scene/a.txt", "content": "end;"})
    assert not validator.is_valid({"path": "a", "content": "b", "dryRun": True, "force": 1})

    validate = Draft202012Validator(manifest.tool("validate_script").input_schema)
    assert validate.is_valid({"path": "game/scene/start.txt"})
    assert not validate.is_valid({"path": "a", "content": "b"})

    restore = Draft202012Validator(manifest.tool("restore_snapshot").input_schema)
    assert restore.is_valid({"snapshotId": "snap_20251101T093210_ab12cd34"})
    assert not restore.is_valid({"snapshotId": "snap_1"})

    preview_out = Draft202012Validator(manifest.tool("preview_scene").output_schema)
    assert preview_out.is_valid({"url": "http://localhost:3001/games/demo/"})
    assert not preview_out.is_valid({"url": "https://example.com/"})

    browser = Draft202012Validator(manifest.tool("browser_action").input_schema)
    assert not browser.is_valid({"action": "open"})
    assert not browser.is_valid({"action": "open", "url": "http://example.com/"})
    assert browser.is_valid({"action": "open", "url": "http://127.0.0.1:3001/"})


def test_dev_tools_are_off_by_default():
    tools = {t.name: t for t in _mode().manifest.tools}
    for name in ("execute_command", "browser_action"):
        assert tools[name].dev_only and not tools[name].enabled_by_default
    assert not any(t.dev_only for n, t in tools.items() if n not in ("execute_command", "browser_action"))


def test_viewer_api_mcp_server_and_workflows():
    manifest = _mode().manifest
    workspace = manifest.viewer_api.workspace
    assert (workspace.type, workspace.multi_file, workspace.ordered, workspace.has_active_file) == (
        "all", True, False, True)
    actions = {a.id: a for a in manifest.viewer_api.actions}
    assert set(actions) == {"navigate-to", "preview-scene", "describe-view"}
    assert actions["navigate-to"].params["file"].required
    assert actions["preview-scene"].params["scene"].required
    assert not actions["preview-scene"].params["line"].required

    (server,) = manifest.skill.mcp_servers
    assert server.name == "pneuma-webgal"
    assert (server.command, server.args) == (
        "pneuma", ["mcp", "--mode", "webgal", "--workspace", "."])

    write_scene = next(w for w in manifest.workflows if w.id == "write-scene")
    steps = [(s.tool, s.params.get("dryRun"), s.requires_confirmation) for s in write_scene.steps]
    dry = steps.index(("write_to_file", True, True))
    real = steps.index(("write_to_file", False, True))
    validate = [s[0] for s in steps].index("validate_script")
    assert dry < real < validate < [s[0] for s in steps].index("preview_scene")
    assert steps[-1][0] == "attempt_completion"

    (language,) = manifest.init.params
    assert language.name == "language" and language.options == ["zh-CN", "en"]
    assert language.default_value == "zh-CN"


# --- seed game ---


def test_seeding_gives_a_playable_game(tmp_path):
    workspace = _seed(tmp_path)
    game = workspace / "game"
    config = {}
    for line in (game / "config.txt").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(":")
        assert value.endswith(";") and " -" not in value
        config[key] = value[:-1]
    assert config["Game_name"] and config["Game_key"]
    assert _exists(workspace, "background", config["Title_img"])
    if "Title_bgm" in config:
        assert _exists(workspace, "bgm", config["Title_bgm"])
    scenes = sorted(p.name for p in (game / "scene").glob("*.txt"))
    assert "start.txt" in scenes and len(scenes) >= 3

    # Seeding again changes nothing, and a workspace with scenes is not re-seeded.
    assert init_workspace(_mode(), workspace, {}).seeded == []


def test_every_seed_line_is_what_it_looks_like(tmp_path):
    workspace = _seed(tmp_path)
    seen_commands = set()
    for scene in sorted(p.name for p in (workspace / "game" / "scene").glob("*.txt")):
        for number, line in enumerate(_scene_lines(workspace, scene), 1):
            where = f"{scene}:{number}"
            if line["kind"] == "comment":
                continue
            assert line["terminated"], f"{where}: missing ';'"
            assert line["kind"] != "continuation", f"{where}: line without ':' (typo?)"
            if line["kind"] == "say":
                # A wrong keyword (ChangeBg, 'changeBg ') would show up as a speaker.
                assert line["speaker"] in SPEAKERS, f"{where}: unexpected speaker {line['speaker']!r}"
                assert line["content"], f"{where}: empty text"
                assert set(line["args"]) <= {"when", "next"}, f"{where}: text cut by ' -'"
            else:
                seen_commands.add(line["command"])
    # The sample teaches the basics.
    assert {"changeBg", "changeFigure", "choose", "label", "jumpLabel", "setVar",
            "setAnimation", "intro", "end"} <= seen_commands


def test_every_reference_in_the_seed_scenes_resolves(tmp_path):
    workspace = _seed(tmp_path)
    table = json.loads((workspace / "game/animation/animationTable.json").read_text("utf-8"))
    for name in table:
        animation = json.loads((workspace / f"game/animation/{name}.json").read_text("utf-8"))
        assert isinstance(animation, list) and all("duration" in frame for frame in animation)

    def animation_ok(name: str) -> bool:
        return name in table and _exists(workspace, "animation", f"{name}.json")

    folders = {"changeBg": "background", "unlockCg": "background", "changeFigure": "figure",
               "miniAvatar": "figure", "bgm": "bgm", "unlockBgm": "bgm", "playEffect": "vocal",
               "playVideo": "video", "changeScene": "scene", "callScene": "scene"}
    scenes = sorted(p.name for p in (workspace / "game" / "scene").glob("*.txt"))
    reached = {"start.txt"}
    checked = 0
    for scene in scenes:
        lines = _scene_lines(workspace, scene)
        labels = {l["content"] for l in lines if l.get("command") == "label"}
        for number, line in enumerate(lines, 1):
            where = f"{scene}:{number}"
            command, content, args = line.get("command"), line.get("content"), line.get("args", {})
            if command in folders and content:
                assert _exists(workspace, folders[command], content), f"{where}: {content} missing"
                checked += 1
                if folders[command] == "scene":
                    reached.add(content)
            if command == "choose":
                for option in content.split("|"):
                    text, target = (part.strip() for part in option.split(":", 1))
                    assert text, where
                    if "." in target:
                        assert _exists(workspace, "scene", target), f"{where}: {target} missing"
                        reached.add(target)
                    else:
                        assert target in labels, f"{where}: no label {target}"
                    checked += 1
            if command == "jumpLabel":
                assert content in labels, f"{where}: no label {content}"
            if command == "setAnimation":
                assert animation_ok(content), f"{where}: animation {content} not in the table"
            for key in ("enter", "exit"):
                if command == "changeFigure" and isinstance(args.get(key), str):
                    assert animation_ok(args[key]), f"{where}: animation {args[key]}"
            if isinstance(args.get("vocal"), str):
                assert _exists(workspace, "vocal", args["vocal"]), where
    assert checked >= 20
    # Every scene can be reached from start.txt.
    assert reached == set(scenes)


def test_seed_images_are_small_valid_pngs(tmp_path):
    workspace = _seed(tmp_path)
    images = sorted((workspace / "game").rglob("*.png"))
    assert {p.parent.name for p in images} == {"background", "figure"}
    for image in images:
        data = image.read_bytes()
        width, height, colour = _png_size(data)
        assert len(data) < 30_000, image.name
        if image.parent.name == "background":
            assert (width, height) == (640, 360) and colour in (2, 6)
        else:
            assert colour == 6, f"{image.name} needs a transparent background"
            assert height > width


# --- skill ---


def test_skill_installs_and_keeps_the_users_mcp_servers(tmp_path):
    workspace = _seed(tmp_path)
    own = {"command": "node", "args": ["my-server.js"]}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"mine": own}}), "utf-8")
    params = {"language": "en"}
    install_skill(_mode(), workspace, params)

    skill = workspace / ".claude/skills/pneuma-webgal"
    text = (skill / "SKILL.md").read_text("utf-8")
    assert text.startswith("---\nname: pneuma-webgal\ndescription: ")
    assert "Project language: **en**" in text and "{{language}}" not in text
    assert '"actionId"' in text and '"action":' not in text
    for name in CONTRACT_TOOLS[:14]:
        assert f"`{name}`" in text, name
    assert (skill / "references/script-grammar.md").is_file()
    assert (skill / "references/tools.md").is_file()

    claude = (workspace / "CLAUDE.md").read_text("utf-8")
    for action in ("navigate-to", "preview-scene", "describe-view"):
        assert f"`{action}`" in claude
    assert "/write-scene" in claude and "`validate_script`" in claude

    servers = json.loads((workspace / ".mcp.json").read_text("utf-8"))["mcpServers"]
    assert servers["mine"] == own
    assert servers["pneuma-webgal"] == {
        "command": "pneuma", "args": ["mcp", "--mode", "webgal", "--workspace", "."]}
    assert (workspace / ".claude/commands/write-scene.md").is_file()

    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    assert not install_skill(_mode(), workspace, params).changed
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before
