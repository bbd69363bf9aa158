"""``get_runtime_info``: what the agent may do here, in one read-only answer.

A generic agent tool any mode can list in its manifest (handler
``pneuma.tools.runtime_info:get_runtime_info``). It never fails and never
includes a secret. The answer: ``projectRoot``, ``snapshotRetention``,
``sandbox`` {``forbiddenDirs``, ``maxReadBytes``, ``textEncoding``}, the
enabled ``tools`` (in manifest order), ``server`` {``name``: the mode's MCP
server name ``pneuma-<mode>``, ``version``: the mode's}, ``contractVersion``,
``language`` (the workspace's ``language`` param, when the mode has one) and,
only while they are on, ``execution`` (see ``command.py``) and ``browser``
(see ``browser.py``).
"""

from __future__ import annotations

from typing import Any

from pneuma.tools.browser import browser_info
from pneuma.tools.command import execution_info
from pneuma.tools.context import ToolContext

TEXT_ENCODINGS = ("utf-8", "utf-16", "ascii")


def get_runtime_info(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    policies = ctx.policies
    encoding = str(policies.get("textEncoding") or "utf-8")
    manifest = ctx.mode.manifest
    info: dict[str, Any] = {
        "projectRoot": str(ctx.workspace),
        "snapshotRetention": int(policies.get("snapshotRetention", 50)),
        "sandbox": {
            "forbiddenDirs": list(ctx.sandbox.forbidden),
            "maxReadBytes": int(policies.get("maxReadBytes") or 5 * 1024 * 1024),
            "textEncoding": encoding if encoding in TEXT_ENCODINGS else "utf-8",
        },
        "tools": [t.name for t in manifest.tools if t.name in ctx.enabled_tools],
        "server": {"name": f"pneuma-{ctx.mode.name}", "version": str(manifest.version)},
        "contractVersion": str(policies.get("contractVersion", "1.0.0")),
    }
    language = ctx.params.get("language") if isinstance(ctx.params, dict) else None
    if isinstance(language, str) and language:
        info["language"] = language
    for name, section in (("execution", execution_info(ctx)), ("browser", browser_info(ctx))):
        if section is not None:
            info[name] = section
    return info
