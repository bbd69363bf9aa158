"""Whether the built-in backends can work now (``BackendSpec.check``):
what ``pneuma backends`` lists, ``pneuma run`` warns about and the
launcher's backend picker shows.

Each check reads only ``context.env``: the launcher and the tests ask
about an environment that is not this process's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping

from pneuma.core.backend import BackendCheckContext, BackendStatus, command_to_type

VERSION_TIMEOUT = 5.0  # seconds a `claude --version` may take before it is left unknown

CLAUDE_INSTALL_FIX = (
    "pip install claude-agent-sdk==0.2.187 (it bundles the CLI), "
    "npm install -g @anthropic-ai/claude-code, or --claude-bin PATH"
)
CLAUDE_CREDENTIALS_MISSING = (
    "credentials (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN "
    "or a `claude login`)"
)


def claude_credentials_fix(binary: str, env: Mapping[str, str]) -> str:
    """The fix line, with the login command the person can type as it is."""
    login = f"{command_to_type(binary, 'claude', env)} login"
    return f"export ANTHROPIC_API_KEY=… in the shell that starts Pneuma, or run `{login}`"


def claude_code_status(context: BackendCheckContext) -> BackendStatus:
    """The CLI found by the lookup the backend itself uses, its version, the
    credentials it would find, and the permission mode it takes as root."""
    from pneuma.agents.claude_code import (
        ROOT_NOTICE,
        find_claude_binary,
        running_as_root,
        sandbox_declared,
    )
    from pneuma.llm.claude_credentials import CREDENTIAL_ENV, credentials_found

    wanted = context.claude_bin or context.env.get("PNEUMA_CLAUDE_BIN")
    notes = (ROOT_NOTICE,) if running_as_root() and not sandbox_declared(context.env) else ()
    # An explicit path that is no executable is said here, not also logged by the lookup.
    binary = (None if wanted and not _executable(wanted, context.env.get("PATH"))
              else find_claude_binary(context.claude_bin, context.env))
    if binary is None:
        missing = f"an executable Claude Code CLI at {wanted}" if wanted else "the Claude Code CLI"
        return BackendStatus(usable=False, missing=missing, fix=CLAUDE_INSTALL_FIX, notes=notes)
    version = _version_of(binary) if context.version else None
    if not credentials_found(context.env):
        return BackendStatus(usable=False, version=version, found=binary,
                             missing=CLAUDE_CREDENTIALS_MISSING,
                             fix=claude_credentials_fix(binary, context.env),
                             notes=notes)
    variables = [name for name in CREDENTIAL_ENV if context.env.get(name)]
    credentials = variables[0] if variables else "a `claude login`"
    return BackendStatus(usable=True, version=version,
                         found=f"{binary}; credentials: {credentials}", notes=notes)


def socket_status(context: BackendCheckContext) -> BackendStatus:
    return BackendStatus(
        usable=True,
        found="an agent connects to ws://127.0.0.1:<port>/ws/cli/<session id>?token=… "
              "and speaks Claude Code stream-json (docs/protocol-cli-socket.md)")


def no_agent_status(context: BackendCheckContext) -> BackendStatus:
    return BackendStatus(usable=True, found="nothing needed: the viewer without an agent")


def _executable(candidate: str, search_path: str | None) -> bool:
    return bool(shutil.which(candidate, path=search_path) or os.access(candidate, os.X_OK))


def _version_of(binary: str) -> str | None:
    """``binary --version``'s first line, or None when it cannot say quickly."""
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else None
