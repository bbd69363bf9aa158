"""The Export menu's "Publish" over HTTP (docs/sharing.md, "Publish"):

    GET  /api/publish            {"targets": [{"name", "kind", "label", "url"}],
                                  "site": the format published by default or null,
                                  "problem": {"code", "message"} when publish.toml is unusable}
    POST /api/publish/{target}   publish the mode's site, or with {"what": "share"}
                                 the shared file of the conversation shown (body,
                                 optional: {"what", "message"}) → {"summary",
                                 "changed", "commit", "url", "what", "warnings"}

The page only ever names a target: where it points (a remote, a folder) is
read from the person's own ``publish.toml`` here, so no page can make
Pneuma push anywhere else. One publish at a time per server; it runs in a
worker thread. A ``PublishError`` answers with its own code and hint, with
no absolute path of the workspace in it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.core.json_body import read_bounded_json
from pneuma.host.exporters import all_exporters
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.publishers import PublishError, all_publishers
from pneuma.publish.run import Published, publish_workspace
from pneuma.publish.targets import read_targets

PREFIX = "/api/publish"
MAX_BODY_BYTES = 16 * 1024
MAX_MESSAGE_CHARS = 2000


def _answer(exc: PublishError, target: str, workspace: Path) -> ToolError:
    problem = str(exc).replace(str(workspace), "the workspace")
    return ToolError(exc.code, f"cannot publish to {target}: {problem}",
                     details={"target": target}, hint=exc.hint)


async def _asked(request: web.Request) -> tuple[bool, str | None]:
    """(publish the shared file, the message) from the optional body."""
    if not request.can_read_body:
        return False, None
    body = await read_bounded_json(request, MAX_BODY_BYTES,
                                   too_large=f"the body is over {MAX_BODY_BYTES} bytes",
                                   not_json='the body must be JSON: {"what": "site", "message": "…"}')
    if not isinstance(body, dict):
        raise ToolError("E_BAD_ARGS", "the body must be a JSON object")
    what = body.get("what", "site")
    if what not in ("site", "share"):
        raise ToolError("E_BAD_ARGS", "'what' must be \"site\" or \"share\"",
                        details={"field": "what"})
    message = body.get("message")
    if message is not None and (not isinstance(message, str) or not message.strip()
                                or len(message) > MAX_MESSAGE_CHARS):
        raise ToolError("E_BAD_ARGS", f"'message' must be text of 1 to {MAX_MESSAGE_CHARS} "
                        "characters", details={"field": "message"})
    return what == "share", message


def publish_routes(pneuma: Any) -> list[web.RouteDef]:
    running = asyncio.Lock()

    async def list_targets(request: web.Request) -> web.Response:
        pm = get_plugin_manager()
        exporter = all_exporters(pm).get(pneuma.mode.name)
        answer: dict[str, Any] = {"targets": [],
                                  "site": exporter.site_format if exporter else None}
        try:
            targets = await asyncio.to_thread(read_targets)
        except PublishError as exc:
            answer["problem"] = {"code": exc.code, "message": str(exc)}
            return web.json_response(answer)
        publishers = all_publishers(pm)
        answer["targets"] = [
            {"name": t.name, "kind": t.kind, "url": t.url,
             "label": publishers[t.kind].label if t.kind in publishers else t.kind}
            for t in targets.values()]
        return web.json_response(answer)

    async def publish(request: web.Request) -> web.Response:
        name = request.match_info["target"]
        share, message = await _asked(request)
        if running.locked():
            raise ToolError("E_CONFLICT", "a publish is under way; wait for it to finish",
                            details={"target": name})
        workspace = pneuma.workspace.resolve()
        async with running:
            try:
                done: Published = await asyncio.to_thread(
                    publish_workspace, get_plugin_manager(), workspace, pneuma.mode.name, name,
                    share=share, message=message, params=dict(pneuma.params),
                    conversation=pneuma.session.conversation_id, secrets=[pneuma.token])
            except PublishError as exc:
                raise _answer(exc, name, workspace) from None
            except OSError as exc:
                raise ToolError("E_IO", f"cannot publish to {name}: "
                                f"{exc.strerror or type(exc).__name__}",
                                details={"target": name}) from None
        result = done.result
        warnings = [w.replace(str(workspace), "the workspace")
                    for w in (*done.warnings, *result.warnings)]
        return web.json_response({"target": name, "what": done.what, "summary": result.summary,
                                  "changed": result.changed, "commit": result.commit,
                                  "url": result.url, "warnings": warnings})

    return [web.get(PREFIX, list_targets), web.post(PREFIX + "/{target}", publish)]

