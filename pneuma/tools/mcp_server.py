"""``pneuma mcp``: a mode's enabled tools as an MCP server over stdio
(official ``mcp`` SDK), calling them through the same runtime as ``pneuma
tool`` and ``POST /api/tools/<name>``.

A success is a tool result whose text is the response JSON, with the same
object as ``structuredContent``; a ToolError is a result with
``isError: true`` and the ``{"error": {...}}`` JSON as its text.

Published input schemas are the manifest's, except that combinators at the
top level (``oneOf``/``anyOf``/``allOf``/``not``/``if``…), which the Claude
API refuses in a tool's input schema, are moved into the description; the
runtime still enforces the full schema on every call.
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

from pneuma.tools.runtime import ToolRuntime

log = logging.getLogger("pneuma.tools.mcp")

TOP_LEVEL_COMBINATORS = ("oneOf", "anyOf", "allOf", "not", "if", "then", "else")


def published_input_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(schema the client sees, sentence describing the constraints taken out)."""
    out = copy.deepcopy(schema)
    removed = {k: out.pop(k) for k in TOP_LEVEL_COMBINATORS if k in out}
    if not removed:
        return out, ""
    note = _describe(removed)
    return out, note


def _describe(removed: dict[str, Any]) -> str:
    parts = []
    one_of = removed.get("oneOf")
    if isinstance(one_of, list) and all(isinstance(s, dict) and set(s) == {"required"}
                                        for s in one_of):
        options = [" + ".join(s["required"]) for s in one_of]
        parts.append("Give exactly one of: " + "; ".join(options) + ".")
    all_of = removed.get("allOf")
    if isinstance(all_of, list):
        for rule in all_of:
            cond = rule.get("if", {}).get("properties", {}) if isinstance(rule, dict) else {}
            then = rule.get("then", {}).get("required") if isinstance(rule, dict) else None
            if len(cond) == 1 and then:
                (field, test), = cond.items()
                if isinstance(test, dict) and "const" in test:
                    parts.append(f"When {field} is {json.dumps(test['const'])}, "
                                 f"{', '.join(then)} {'is' if len(then) == 1 else 'are'} "
                                 "required.")
    if not parts:
        parts.append("Also must satisfy: " + json.dumps(removed, ensure_ascii=False))
    return " ".join(parts)


def build_server(runtime: ToolRuntime):
    import mcp.types as types
    from mcp.server.lowlevel import Server

    from pneuma import __version__

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = []
        for spec in runtime.enabled_specs():
            schema, note = published_input_schema(spec.input_schema)
            description = spec.description + (f"\n\n{note}" if note else "")
            tools.append(types.Tool(name=spec.name, description=description,
                                    input_schema=schema, output_schema=spec.output_schema))
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        result = await runtime.call_async(params.name, params.arguments or {})
        text = json.dumps(result, ensure_ascii=False)
        if "error" in result and len(result) == 1:
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=text)],
                                    structured_content=result)

    return Server(
        f"pneuma-{runtime.mode.name}",
        version=__version__,
        instructions=f"Tools of the Pneuma {runtime.mode.name} mode for the workspace "
        f"{runtime.workspace}. Paths are relative to it.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(runtime: ToolRuntime) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(runtime)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(runtime: ToolRuntime) -> None:
    import anyio

    anyio.run(serve_stdio, runtime)
