"""``execute_command``: run one allowed ``package.json`` script of the workspace.

A generic agent tool any mode can list in its manifest (handler
``pneuma.tools.command:execute_command``, ``devOnly``: it is off until
``--enable-exec`` or the policy ``execution.enabled`` turns it on).

Arguments ``{scriptName, args?}``; answer ``{ok, logs}`` (``ok``: exit code 0;
``logs``: the last 500 lines of stdout and stderr together). Only a script
named in the policy ``allowedCommands`` *and* defined in the ``package.json``
of the policy's ``execution.workingDir`` (default: the workspace) runs; it
runs through pnpm, yarn or npm (whichever lock file is there), never a shell.
Environment variables whose names match ``execution.redactEnv`` are not
passed on, and their values are replaced by ``***`` in the logs. A script
still running after ``execution.timeoutMs`` is stopped with its whole process
group (``E_TIMEOUT``): a dev server cannot be run this way.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.core.files import read_text
from pneuma.tools.context import ToolContext

MAX_LOG_LINES = 500


def _execution(ctx: ToolContext) -> dict[str, Any]:
    section = ctx.policies.get("execution")
    return section if isinstance(section, dict) else {}


def working_dir(ctx: ToolContext) -> Path:
    """Where scripts run: the policy's ``execution.workingDir`` inside the workspace."""
    rel = _execution(ctx).get("workingDir")
    if rel and rel not in (".", "${projectRoot}"):
        return ctx.sandbox.resolve(str(rel))
    return ctx.workspace


def timeout_seconds(ctx: ToolContext) -> float:
    return int(_execution(ctx).get("timeoutMs") or 30000) / 1000


def allowed_commands(ctx: ToolContext) -> list[str]:
    return [str(c) for c in ctx.policies.get("allowedCommands") or []]


def execution_info(ctx: ToolContext) -> dict[str, Any] | None:
    """What ``get_runtime_info`` reports of this tool (None while it is off)."""
    if not _execution(ctx).get("enabled") or "execute_command" not in ctx.enabled_tools:
        return None
    return {
        "enabled": True,
        "allowedCommands": allowed_commands(ctx),
        "timeoutMs": int(timeout_seconds(ctx) * 1000),
        "workingDir": str(working_dir(ctx)),
    }


def _is_secret(name: str, patterns: list[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns)


def _script_runner(cwd: Path) -> list[str]:
    if (cwd / "pnpm-lock.yaml").is_file() and shutil.which("pnpm"):
        return ["pnpm", "run"]
    if (cwd / "yarn.lock").is_file() and shutil.which("yarn"):
        return ["yarn", "run"]
    npm = shutil.which("npm")
    if not npm:
        raise ToolError("E_INTERNAL", "npm is not installed", hint="Install Node.js and npm.")
    return [npm, "run", "--silent"]


def _package_scripts(ctx: ToolContext, cwd: Path) -> dict[str, Any]:
    rel = (Path(os.path.relpath(cwd, ctx.workspace)) / "package.json").as_posix()
    rel = rel[2:] if rel.startswith("./") else rel
    text, _ = read_text(ctx, rel)
    try:
        scripts = json.loads(text).get("scripts") or {}
    except (ValueError, AttributeError):
        raise ToolError("E_PARSE_FAIL", f"{rel} is not valid JSON", details={"path": rel}) from None
    return scripts if isinstance(scripts, dict) else {}


def _run(command: list[str], cwd: Path, env: dict[str, str],
         timeout: float) -> tuple[int | None, bytes]:
    """(exit code, output); the exit code is None when the script was stopped."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        out, _ = process.communicate(timeout=timeout)
        return process.returncode, out
    except subprocess.TimeoutExpired:
        pass
    # Its own session: the whole group goes (npm's child, the script's children).
    try:
        os.killpg(process.pid, signal.SIGTERM)
        out, _ = process.communicate(timeout=3)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = process.communicate()
    return None, out


def execute_command(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    script = args["scriptName"]
    extra = [str(item) for item in args.get("args") or []]
    allowed = allowed_commands(ctx)
    if script not in allowed:
        raise ToolError("E_POLICY_VIOLATION", f"the script {script!r} is not on the allow-list",
                        details={"scriptName": script, "allowedCommands": allowed},
                        hint="Only these package.json scripts may run: " + (", ".join(allowed) or "none"))
    if any(ch in item for item in extra for ch in "\x00\n\r"):
        raise ToolError("E_BAD_ARGS", "arguments must be single-line text", details={"field": "args"})
    cwd = working_dir(ctx)
    scripts = _package_scripts(ctx, cwd)
    if script not in scripts:
        raise ToolError("E_POLICY_VIOLATION", f"package.json has no script {script!r}",
                        details={"scriptName": script, "scripts": sorted(scripts)},
                        hint="Only scripts defined in package.json and allowed by the policy can run.")

    patterns = [str(p) for p in _execution(ctx).get("redactEnv") or []]
    env = {k: v for k, v in os.environ.items() if not _is_secret(k, patterns)}
    # Longest first, so that a secret containing another is hidden whole.
    secrets = sorted({v for k, v in os.environ.items() if _is_secret(k, patterns) and len(v) >= 4},
                     key=len, reverse=True)
    timeout = timeout_seconds(ctx)
    command = _script_runner(cwd) + [script] + (["--", *extra] if extra else [])
    code, out = _run(command, cwd, env, timeout)

    def redact(line: str) -> str:
        for value in secrets:
            line = line.replace(value, "***")
        return line

    logs = [redact(line) for line in out.decode("utf-8", "replace").splitlines()][-MAX_LOG_LINES:]
    if code is None:
        raise ToolError("E_TIMEOUT", f"{script} did not finish within {timeout:g} s and was stopped",
                        details={"scriptName": script, "timeoutMs": int(timeout * 1000),
                                 "logs": logs[-50:]},
                        hint="A long-running script (a dev server) cannot be run through "
                             "execute_command; raise execution.timeoutMs for slow builds.")
    return {"ok": code == 0, "logs": logs}
