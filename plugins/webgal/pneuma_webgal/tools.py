"""Handlers of the WebGAL mode's tools (named in manifest.json).

The generic file tools come from the host's tool runtime; the WebGAL ones
(validate_script, list_project_resources, preview_scene, get_runtime_info,
generate_character_profile, the interaction signals, execute_command and
browser_action) are here. Each is ``handler(ctx, args) -> dict`` and raises
``ToolError`` with one of the contract's codes.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import urllib.parse
from pathlib import Path, PurePosixPath
from typing import Any

from pneuma.tools.chromium import CHROMIUM, CHROMIUM_ARGS
from pneuma.tools.builtin_files import (  # noqa: F401
    list_files,
    list_snapshots,
    read_file,
    replace_in_file,
    restore_snapshot,
    search_files,
    write_to_file,
)
from pneuma.tools.context import ToolContext
from pneuma.tools.errors import ToolError
from pneuma.tools.files import atomic_write_text, read_text
from pneuma_webgal import preview as _preview
from pneuma_webgal.resources import build_index, game_root_for, list_resources
from pneuma_webgal.script import parse_scene
from pneuma_webgal.validate import diagnose_scene

SERVER_NAME = "pneuma-webgal"
PREVIEW_WAIT = 8.0  # seconds preview_scene waits for an open game to land
CHARACTERS_FILE = "game/characters.json"


# --- helpers --------------------------------------------------------------------


def diagnostics_language(ctx: ToolContext, args: dict[str, Any] | None = None) -> str:
    """Chinese by default; English when the request, the environment
    (PNEUMA_WEBGAL_LANG=EN, the seed's ZH|EN switch), the workspace's
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


def _local_url(url: str) -> bool:
    try:
        parsed = urllib.parse.urlsplit(url)
    except ValueError:
        return False
    return parsed.scheme in ("http", "https") and parsed.hostname in _preview.LOCAL_HOSTS and not parsed.username


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


def _fragment(scene_file: str) -> str:
    name = scene_file[:-4] if scene_file.endswith(".txt") else scene_file
    return "#scene=" + urllib.parse.quote(name, safe="/-_.~")


def _engine_url(base: str, scene_file: str, line: int) -> str:
    """``<base>/webgal/#scene=<file>&line=<n>``: the page static/launcher.js jumps."""
    return (f"{base.rstrip('/')}/webgal/#scene={urllib.parse.quote(scene_file, safe='/-_.~')}"
            f"&line={int(line)}")


def _wait_seconds(ctx: ToolContext) -> float:
    """How long preview_scene waits for an open game to land (policy previewWaitSeconds)."""
    value = ctx.policies.get("previewWaitSeconds", PREVIEW_WAIT)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return PREVIEW_WAIT
    return max(0.0, min(float(value), 60.0))


def _terre_config(ctx: ToolContext) -> dict[str, Any] | None:
    raw = ctx.policies.get("terre")
    preview = ctx.policies.get("preview")
    if raw is None and isinstance(preview, dict):
        raw = preview.get("terre")
    if raw is True:
        raw = {}
    if not isinstance(raw, dict) or raw.get("enabled") is False:
        return None
    return raw


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

    terre = _terre_config(ctx)
    if terre is not None:
        url = await _terre_url(ctx, terre, scene_file, _fragment(scene_file), logs)
    elif ctx.server_url:
        url = await _pneuma_server_url(ctx, scene_file, line, logs)
    else:
        url = None
    if url is None:
        url = await _background_url(ctx, scene_file, line, logs)
    result["url"] = url
    result["logs"] = logs
    return result


async def _terre_url(ctx: ToolContext, terre: dict[str, Any], scene_file: str, fragment: str,
                     logs: list[str]) -> str:
    base = str(terre.get("url") or f"http://{terre.get('host', 'localhost')}:{int(terre.get('port', 3001))}")
    if not _local_url(base):
        raise ToolError("E_POLICY_VIOLATION", f"Terre URL {base} is not local",
                        details={"url": base}, hint="Only http://localhost and http://127.0.0.1 are allowed.")
    game_dir = str(terre.get("gameDir") or ctx.workspace.name)
    page = f"{base.rstrip('/')}/games/{urllib.parse.quote(game_dir)}/"
    status = await asyncio.to_thread(_preview.http_get, page, timeout=float(terre.get("timeoutSeconds", 3)))
    if status == 0:
        raise ToolError("E_PREVIEW_FAIL", f"WebGAL Terre is not running at {base}",
                        details={"url": page}, hint="Start WebGAL Terre (it listens on port 3001 by default) "
                        "or remove the terre policy to use Pneuma's own preview.")
    if status >= 400:
        raise ToolError("E_PREVIEW_FAIL", f"Terre answered {status} for {page}",
                        details={"url": page, "status": status},
                        hint=f"Is the game folder named {game_dir!r} in Terre? Set terre.gameDir in the policy.")
    ws = base.replace("http://", "ws://", 1).replace("https://", "wss://", 1).rstrip("/") + "/api/webgalsync"
    try:
        await _preview.ws_jump(ws, scene_file, 1)
        logs.append(f"Terre: asked open previews to jump to {scene_file}")
    except Exception as exc:
        logs.append(f"Terre: could not send the jump to {scene_file} ({type(exc).__name__}); open the page and "
                    "use Terre's editor to jump")
    return page + fragment


def _post_jump(base: str, token: str | None, scene_file: str, line: int,
               wait: float) -> tuple[int, dict[str, Any] | None]:
    """``POST <base>/api/webgal/jump``: (status, answer); (0, None) when nothing answers.
    Only a game already open is waited for (``pendingWait: 0``)."""
    import urllib.error
    import urllib.request

    body = json.dumps({"scene": scene_file, "line": line, "wait": wait,
                       "pendingWait": 0}).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(base.rstrip("/") + "/api/webgal/jump", data=body,
                                     headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=wait + 10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read() or b"null")
        except ValueError:
            return exc.code, None
    except (urllib.error.URLError, OSError, ValueError):
        return 0, None


def _jump_logs(answer: dict[str, Any], scene_file: str, line: int, url: str) -> list[str]:
    """What the jump did, in words: where the game landed and what it shows."""
    if answer.get("landed") and isinstance(answer.get("preview"), dict):
        shown = answer["preview"]
        said = f"{shown.get('speaker')}: {shown.get('text')}" if shown.get("speaker") \
            else str(shown.get("text") or "")
        return [f"the preview landed on {shown.get('scene') or scene_file} line "
                f"{shown.get('line') or line}" + (f"; it shows: {said}" if said else "")]
    if answer.get("delivered"):
        return [f"jumped {answer['delivered']} open preview(s) to {scene_file} line {line}; "
                "none reported landing yet"]
    return [f"no preview is open: the first one to open ({url}) jumps to {scene_file} line {line}"]


async def _pneuma_server_url(ctx: ToolContext, scene_file: str, line: int,
                             logs: list[str]) -> str | None:
    base = ctx.server_url.rstrip("/")
    if not _local_url(base):
        raise ToolError("E_POLICY_VIOLATION", f"the Pneuma server {base} is not local",
                        details={"url": base}, hint="Only http://localhost and http://127.0.0.1 are allowed.")
    status, answer = await asyncio.to_thread(_post_jump, base, ctx.server_token, scene_file, line,
                                             _wait_seconds(ctx))
    if status != 200 or not isinstance(answer, dict):
        reason = (answer or {}).get("error", {}).get("message") if isinstance(answer, dict) else None
        logs.append(f"pneuma run at {base} could not jump the preview (status {status or 'no answer'}"
                    + (f": {reason}" if reason else "") + "); using a background preview server")
        return None
    url = _engine_url(base, scene_file, answer.get("line") or line)
    logs.extend(_jump_logs(answer, scene_file, answer.get("line") or line, url))
    return url


async def _background_url(ctx: ToolContext, scene_file: str, line: int, logs: list[str]) -> str:
    language = str(ctx.params.get("language") or "") if isinstance(ctx.params, dict) else ""
    try:
        info = await asyncio.to_thread(_preview.start_server, ctx.workspace, language=language)
    except TimeoutError as exc:
        raise ToolError("E_TIMEOUT", f"the preview server did not start: {exc}",
                        hint="See .pneuma/webgal-preview.log.") from None
    except (RuntimeError, OSError) as exc:
        raise ToolError("E_PREVIEW_FAIL", f"no preview can be served: {exc}",
                        details={"engineSearched": [str(p) for p in _preview.engine_candidates()]},
                        hint="Set up the engine (npm ci && npm run build in the webgal mode's web/ folder) "
                        "or run `pneuma run` for this workspace.") from None
    port = int(info["port"])
    base = f"http://127.0.0.1:{port}"
    logs.append(("reused" if info.get("reused") else "started")
                + f" the background preview server (pid {info['pid']}, port {port}); it stops after "
                f"{int(_preview.IDLE_SECONDS // 60) or 1} idle minutes")
    url = _engine_url(base, scene_file, line)
    status, answer = await asyncio.to_thread(_post_jump, base, None, scene_file, line,
                                             _wait_seconds(ctx))
    if status == 200 and isinstance(answer, dict):
        url = _engine_url(base, scene_file, answer.get("line") or line)
        logs.extend(_jump_logs(answer, scene_file, answer.get("line") or line, url))
    return url


# --- get_runtime_info -------------------------------------------------------------


def get_runtime_info(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    p = ctx.policies
    encoding = str(p.get("textEncoding") or "utf-8")
    info: dict[str, Any] = {
        "projectRoot": str(ctx.workspace),
        "snapshotRetention": int(p.get("snapshotRetention", 50)),
        "sandbox": {
            "forbiddenDirs": list(ctx.sandbox.forbidden),
            "maxReadBytes": int(p.get("maxReadBytes") or 5 * 1024 * 1024),
            "textEncoding": encoding if encoding in ("utf-8", "utf-16", "ascii") else "utf-8",
        },
        "tools": [t.name for t in ctx.mode.manifest.tools if t.name in ctx.enabled_tools],
        "server": {"name": SERVER_NAME, "version": str(ctx.mode.manifest.version)},
        "contractVersion": str(p.get("contractVersion", "1.0.0")),
        "language": diagnostics_language(ctx),
    }
    execution = p.get("execution") or {}
    if execution.get("enabled") and "execute_command" in ctx.enabled_tools:
        info["execution"] = {
            "enabled": True,
            "allowedCommands": [str(c) for c in p.get("allowedCommands") or []],
            "timeoutMs": int(execution.get("timeoutMs") or 30000),
            "workingDir": str(_working_dir(ctx)),
        }
    browser = p.get("browser") or {}
    if browser.get("enabled") and "browser_action" in ctx.enabled_tools:
        info["browser"] = {
            "enabled": True,
            "allowedHosts": [str(h) for h in p.get("browserAllowedHosts") or []],
            "timeoutMs": int(browser.get("timeoutMs") or 15000),
            "screenshotDir": str(browser.get("screenshotDir") or ".pneuma/screenshots"),
        }
    return info


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


# --- ask_followup_question / attempt_completion ------------------------------------


async def ask_followup_question(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    question = args["question"]
    if ctx.interact is not None:
        answer = await ctx.interact.ask(question, None)
        result: dict[str, Any] = {"ack": True}
        if isinstance(answer, str):
            result["answer"] = answer
        return result
    if ctx.server_url:
        from pneuma.tools.runtime import forward_to_server

        return await asyncio.to_thread(forward_to_server, ctx, "ask_followup_question", args)
    raise ToolError("E_UNSUPPORTED", "no browser page is connected to ask the person",
                    details={"question": question},
                    hint="Ask the question in your reply and wait for the person's answer.")


async def attempt_completion(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    summary = args["result"]
    if ctx.interact is not None:
        await ctx.interact.complete(summary)
        return {"ack": True}
    if ctx.server_url:
        from pneuma.tools.runtime import forward_to_server

        return await asyncio.to_thread(forward_to_server, ctx, "attempt_completion", args)
    raise ToolError("E_UNSUPPORTED", "no browser page is connected to show the result",
                    details={"result": summary},
                    hint="Give the summary in your reply instead.")


# --- execute_command -----------------------------------------------------------------


def _working_dir(ctx: ToolContext) -> Path:
    rel = (ctx.policies.get("execution") or {}).get("workingDir")
    if rel and rel not in (".", "${projectRoot}"):
        return ctx.sandbox.resolve(str(rel))
    return ctx.workspace


def _secret_names(ctx: ToolContext) -> list[str]:
    return [str(p) for p in (ctx.policies.get("execution") or {}).get("redactEnv") or []]


def _is_secret(name: str, patterns: list[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns)


def _runner(cwd: Path) -> list[str]:
    if (cwd / "pnpm-lock.yaml").is_file() and shutil.which("pnpm"):
        return ["pnpm", "run"]
    if (cwd / "yarn.lock").is_file() and shutil.which("yarn"):
        return ["yarn", "run"]
    npm = shutil.which("npm")
    if not npm:
        raise ToolError("E_INTERNAL", "npm is not installed", hint="Install Node.js and npm.")
    return [npm, "run", "--silent"]


def execute_command(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    script = args["scriptName"]
    extra = list(args.get("args") or [])
    allowed = [str(c) for c in ctx.policies.get("allowedCommands") or []]
    if script not in allowed:
        raise ToolError("E_POLICY_VIOLATION", f"the script {script!r} is not on the allow-list",
                        details={"scriptName": script, "allowedCommands": allowed},
                        hint="Only these package.json scripts may run: " + (", ".join(allowed) or "none"))
    for item in extra:
        if any(ch in item for ch in "\x00\n\r"):
            raise ToolError("E_BAD_ARGS", "arguments must be single-line text", details={"field": "args"})
    cwd = _working_dir(ctx)
    rel_pkg = (Path(os.path.relpath(cwd, ctx.workspace)) / "package.json").as_posix()
    rel_pkg = rel_pkg[2:] if rel_pkg.startswith("./") else rel_pkg
    text, _ = read_text(ctx, rel_pkg)
    try:
        scripts = json.loads(text).get("scripts") or {}
    except (ValueError, AttributeError):
        raise ToolError("E_PARSE_FAIL", f"{rel_pkg} is not valid JSON", details={"path": rel_pkg}) from None
    if script not in scripts:
        raise ToolError("E_POLICY_VIOLATION", f"package.json has no script {script!r}",
                        details={"scriptName": script, "scripts": sorted(scripts)},
                        hint="Only scripts defined in package.json and allowed by the policy can run.")

    patterns = _secret_names(ctx)
    env = {k: v for k, v in os.environ.items() if not _is_secret(k, patterns)}
    secrets = sorted({v for k, v in os.environ.items() if _is_secret(k, patterns) and len(v) >= 4},
                     key=len, reverse=True)
    timeout = int((ctx.policies.get("execution") or {}).get("timeoutMs") or 30000) / 1000
    command = _runner(cwd) + [script] + (["--", *extra] if extra else [])
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            out, _ = proc.communicate(timeout=3)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, _ = proc.communicate()

    def redact(line: str) -> str:
        for value in secrets:
            line = line.replace(value, "***")
        return line

    logs = [redact(line) for line in out.decode("utf-8", "replace").splitlines()][-500:]
    if timed_out:
        raise ToolError("E_TIMEOUT", f"{script} did not finish within {timeout:g} s and was stopped",
                        details={"scriptName": script, "timeoutMs": int(timeout * 1000), "logs": logs[-50:]},
                        hint="A long-running script (a dev server) cannot be run through execute_command; "
                        "raise execution.timeoutMs for slow builds.")
    return {"ok": proc.returncode == 0, "logs": logs}


# --- browser_action --------------------------------------------------------------------

_BROWSER_STATE = "browser"


def _allowed_host(ctx: ToolContext, url: str) -> bool:
    hosts = [str(h) for h in ctx.policies.get("browserAllowedHosts") or _preview.LOCAL_HOSTS]
    try:
        host = urllib.parse.urlsplit(url).hostname
    except ValueError:
        return False
    return _local_url(url) and host in hosts


def _screenshot_target(ctx: ToolContext, rel: str) -> Path:
    if not rel.lower().endswith((".png", ".jpg", ".jpeg")):
        raise ToolError("E_BAD_ARGS", "a screenshot path must end in .png, .jpg or .jpeg",
                        details={"field": "path", "path": rel})
    if "/" not in rel.strip("/"):
        # A bare file name goes to the policy's screenshot folder (under .pneuma/ by default,
        # which the sandbox keeps away from the file tools, so it is checked here).
        folder = str((ctx.policies.get("browser") or {}).get("screenshotDir") or ".pneuma/screenshots")
        ctx.sandbox.normalize(rel)
        base = (ctx.workspace / folder).resolve()
        if base != ctx.workspace and ctx.workspace not in base.parents:
            raise ToolError("E_DENY_PATH", f"screenshotDir {folder} is outside the workspace",
                            details={"path": folder})
        return base / rel
    return ctx.sandbox.resolve(rel)


async def browser_action(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    action = args["action"]
    saved = ctx.state.load(_BROWSER_STATE, {}) or {}
    if action == "open":
        url = args["url"]
    else:
        url = saved.get("url")
        if not url:
            raise ToolError("E_BAD_ARGS", f"{action} needs an open page: call browser_action open first",
                            details={"field": "action"})
    if not _allowed_host(ctx, url):
        raise ToolError("E_POLICY_VIOLATION", f"{url} is not a local address",
                        details={"url": url}, hint="Only http://localhost:* and http://127.0.0.1:* may be opened.")
    target = _screenshot_target(ctx, args["path"]) if action == "screenshot" else None
    timeout_ms = int((ctx.policies.get("browser") or {}).get("timeoutMs") or 15000)

    try:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout
        from playwright.async_api import async_playwright
    except ImportError:
        raise ToolError("E_UNSUPPORTED", "Playwright is not installed", hint="pip install playwright") from None
    if not Path(CHROMIUM).exists():
        raise ToolError("E_UNSUPPORTED", f"no Chromium at {CHROMIUM}", hint="Install Debian's chromium package.")

    async def guard(route):
        if _allowed_host(ctx, route.request.url) or route.request.url.startswith(("data:", "blob:")):
            await route.continue_()
        else:
            await route.abort("blockedbyclient")

    new_url = url
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 720})
                page.set_default_timeout(timeout_ms)
                await page.route("**/*", guard)
                response = await page.goto(url, wait_until="load", timeout=timeout_ms)
                if response is not None and response.status >= 400:
                    raise ToolError("E_PREVIEW_FAIL", f"{url} answered {response.status}",
                                    details={"url": url, "status": response.status})
                if action == "click":
                    await page.click(args["selector"], timeout=timeout_ms)
                    await page.wait_for_load_state("load", timeout=timeout_ms)
                    new_url = page.url
                elif action == "screenshot":
                    target.parent.mkdir(parents=True, exist_ok=True)
                    await page.screenshot(path=str(target))
            finally:
                await browser.close()
    except ToolError:
        raise
    except PlaywrightTimeout as exc:
        raise ToolError("E_TIMEOUT", f"browser {action} timed out after {timeout_ms} ms: {exc.message.splitlines()[0]}",
                        details={"url": url, "action": action}) from None
    except PlaywrightError as exc:
        raise ToolError("E_PREVIEW_FAIL", f"browser {action} failed: {exc.message.splitlines()[0]}",
                        details={"url": url, "action": action},
                        hint="Is the local page being served? Check the URL with preview_scene.") from None
    if _allowed_host(ctx, new_url):
        ctx.state.save(_BROWSER_STATE, {"url": new_url})
    return {"ok": True}
