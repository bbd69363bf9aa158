"""The native backend as a plugin: it offers itself through
``register_backends`` exactly as a third-party backend package would (the
host lists this module in ``DEFAULT_PLUGINS`` instead of an entry point).

The runtime is imported only when a session chooses ``--backend native``,
so listing backends stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from pneuma.api import BackendSpec, BackendStatus, hookimpl

from . import page_module

if TYPE_CHECKING:
    from pneuma.api import (
        AgentBackend,
        AgentEventSink,
        BackendCheckContext,
        BackendOptions,
        Pneuma,
    )


def _native(options: BackendOptions, sink: AgentEventSink) -> AgentBackend:
    from .backend import NativeBackend

    return NativeBackend(options, sink)


def _native_routes(pneuma: Pneuma) -> list[Any]:
    from .routes import native_routes

    return native_routes(pneuma)


def _native_status(context: BackendCheckContext) -> BackendStatus:
    """Usable when the gateway could make a call with the settings a
    session would use (a workspace's native.json, PNEUMA_NATIVE_*): the
    provider's key in the environment, or a local server that needs none."""
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    from pneuma.api import LLMGateway

    from .config import NativeConfig

    config = NativeConfig.load(context.workspace or Path("."), env=context.env)
    settings = config.llm_settings()
    try:
        sdk = f"{settings.provider} {version(settings.provider)}"
    except (PackageNotFoundError, ValueError):
        return BackendStatus(usable=False, missing=f"the {settings.provider} package",
                             fix=f"pip install {settings.provider}")
    invalid = settings.problems()
    if invalid:
        return BackendStatus(usable=False, version=sdk,
                             missing=f"valid model settings ({'; '.join(invalid)})",
                             fix="correct .pneuma/native.json or PNEUMA_NATIVE_* (docs/native.md)")
    if LLMGateway(settings, env=context.env).problem() is not None:
        openai = settings.provider == "openai"
        variable = settings.api_key_env or ("OPENAI_API_KEY" if openai else "ANTHROPIC_API_KEY")
        either = "" if settings.api_key_env or openai else " or ANTHROPIC_AUTH_TOKEN"
        local = "; a local server needs none: set its base_url" if openai else ""
        return BackendStatus(usable=False, version=sdk,
                             missing=f"an API key for the {settings.provider} provider "
                                     f"({variable}{either})",
                             fix=f"export {variable}=… in the shell that starts Pneuma{local}")
    return BackendStatus(usable=True, version=sdk,
                         found=f"{settings.provider} provider, model {settings.model}")


NATIVE = BackendSpec(
    name="native",
    description=(
        "Pneuma's own runtime: drives the Anthropic Messages API itself, with the "
        "mode's tools, the viewer's actions and connected browser clients "
        "(`pneuma browser-client`). Needs ANTHROPIC_API_KEY."
    ),
    factory=_native,
    routes=_native_routes,
    browser_module=page_module.URL,
    check=_native_status,
)


@hookimpl
def register_backends() -> list[BackendSpec]:
    return [NATIVE]


@hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(browser_client_command)


@click.command("browser-client")
@click.option("--server", required=True, help="The URL `pneuma run --backend native` printed "
              "(only scheme, host and port are used).")
@click.option("--token", envvar="PNEUMA_TOKEN", required=True,
              help="The session token (the ready line's token=…; default $PNEUMA_TOKEN).")
@click.option("--name", default=None, help="How the client is shown in the picker.")
@click.option("--client-id", default=None, help="A stable id (default: a new one).")
@click.option("--chromium", default="/usr/bin/chromium", show_default=True,
              help="Chromium executable; empty for Playwright's own build.")
@click.option("--headed", is_flag=True, help="Show the browser window.")
def browser_client_command(server: str, token: str, name: str | None, client_id: str | None,
                           chromium: str, headed: bool) -> None:
    """Carry out a native session's browser actions in a headless Chromium."""
    import asyncio
    from urllib.parse import urlsplit

    from .browser_client import run_client

    parts = urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        _fail(f"--server must be an http(s) URL, not {server!r}", 2)
    try:
        asyncio.run(run_client(f"{parts.scheme}://{parts.netloc}", token, name=name,
                               client_id=client_id, executable_path=chromium or None,
                               headless=not headed))
    except KeyboardInterrupt:
        pass
    except (ConnectionError, OSError) as exc:
        _fail(f"browser client: {exc}", 1)


def _fail(message: str, status: int) -> None:
    """One line, as every ``pneuma`` command reports a failure."""
    click.echo(f"pneuma: error: {message}", err=True)
    raise SystemExit(status)
