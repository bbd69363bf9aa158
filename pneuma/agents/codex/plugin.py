"""The Codex backend as a plugin: offered through ``register_backends`` the
way a third-party backend package would be (the host lists this module in
``DEFAULT_PLUGINS``). The backend itself is imported only when a session
chooses ``--backend codex``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pneuma.api import (
    BackendCheckContext,
    BackendSpec,
    BackendStatus,
    command_to_type,
    hookimpl,
)

from .binary import (
    CODEX_VERSION,
    INSTALL_HINT,
    codex_version,
    credentials_found,
    find_codex_binary,
)

if TYPE_CHECKING:
    from pneuma.api import AgentBackend, AgentEventSink, BackendOptions


def _codex(options: BackendOptions, sink: AgentEventSink) -> AgentBackend:
    from .backend import CodexBackend

    return CodexBackend(options, sink)


def _check(context: BackendCheckContext) -> BackendStatus:
    binary = find_codex_binary(context.env)
    if binary is None:
        return BackendStatus(usable=False, missing=f"the Codex CLI (@openai/codex@{CODEX_VERSION})",
                             fix=INSTALL_HINT)
    version = codex_version(binary, context.env) if context.version else None
    found = credentials_found(context.env)
    if found is None:
        return BackendStatus(usable=False, version=version, found=binary,
                             missing="credentials for Codex (OPENAI_API_KEY or a `codex login`)",
                             fix="export OPENAI_API_KEY=… in the shell that starts Pneuma, "
                                 f"or run `{command_to_type(binary, 'codex', context.env)} login`")
    return BackendStatus(usable=True, version=version, found=f"{binary}; credentials: {found}")


CODEX = BackendSpec(
    name="codex",
    description=(
        "The OpenAI Codex CLI (@openai/codex), driven over `codex app-server` JSON-RPC: "
        "streamed replies, command and patch cards, approvals, interrupt, resume."
    ),
    factory=_codex,
    check=_check,
    # Codex reads AGENTS.md, not CLAUDE.md: the skill's sections go there too.
    instruction_files=("AGENTS.md",),
)


@hookimpl
def register_backends() -> list[BackendSpec]:
    return [CODEX]
