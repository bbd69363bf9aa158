"""The aiohttp application of one Pneuma session: ``create_app()``, the factory."""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.checkpoints import Checkpoints, turn_listener
from pneuma.core.backend import BackendOptions
from pneuma.core.files import remove_stale_temp_files
from pneuma.core.sandbox import Sandbox
from pneuma.host.plugins import get_plugin_manager
from pneuma.server import (
    csp,
    routes_api,
    routes_checkpoints,
    routes_export,
    routes_files,
    routes_snapshot,
    routes_tools,
    ws_browser,
    ws_cli,
)
from pneuma.server.config import (
    CONFIG,
    FILE_FILTER,
    SANDBOX,
    SELF_WRITES,
    SESSION,
    STOP_EVENT,
    ServerConfig,
)
from pneuma.server.early_server import no_agent_text
from pneuma.server.errors import error_middleware
from pneuma.server.handle import PNEUMA, Pneuma
from pneuma.server.persistence import (
    STATE_DIR,
    SeqReservation,
    encode_session,
    stale_files,
    try_open_log,
    write_files,
)
from pneuma.server.preferences import add_routes as add_preference_routes
from pneuma.server.security import allowed_hosts, make_security_middleware
from pneuma.server.watcher import FileFilter, SelfWrites, watch_workspace

log = logging.getLogger(__name__)
# Free space after which paused checkpoints are tried again (the next turn's).
CHECKPOINT_ROOM = 4 * 1024 * 1024


def create_app(config: ServerConfig) -> web.Application:
    def hosts() -> set[str]:
        return allowed_hosts(config.host, config.port) | config.extra_hosts

    app = web.Application(
        middlewares=[make_security_middleware(config.token, hosts), error_middleware],
        client_max_size=64 * 1024 * 1024,
    )
    app[CONFIG] = config
    app[SESSION] = config.session
    app[SANDBOX] = Sandbox(config.workspace)
    app[SELF_WRITES] = SelfWrites()
    manifest = config.mode.manifest
    app[FILE_FILTER] = FileFilter(manifest.viewer.watch_patterns, manifest.viewer.ignore_patterns,
                                  manifest.viewer.text_suffixes)
    app[STOP_EVENT] = asyncio.Event()

    pneuma = Pneuma(config, config.session, app[SANDBOX], app[SELF_WRITES])
    app[PNEUMA] = pneuma

    csp.setup(app)
    routes_api.setup(app)
    routes_files.setup(app)
    routes_tools.setup(app)
    routes_checkpoints.setup(app)
    routes_snapshot.setup(app)  # a checkpoint's files, read-only: Compare, the timeline
    routes_export.setup(app)  # the Export menu: the mode's exporter
    add_preference_routes(app, config.workspace)  # the person's, not the port's
    ws_browser.setup(app)
    ws_cli.setup(app)

    # The served mode's own routes, from the plugin that provides it only.
    app.router.add_routes(_owner_register_routes(config.mode.plugin_name)(pneuma=pneuma) or [])
    if config.backend is not None and config.backend.routes is not None:
        app.router.add_routes(list(config.backend.routes(pneuma)))

    # Tabs are closed first: aiohttp otherwise waits out its shutdown
    # timeout for every open socket handler before any cleanup runs.
    app.on_startup.append(_start_plugins)
    app.on_shutdown.append(_close_tabs)
    # Order matters on the way out (reverse): the agent stops first, then
    # the state is saved, then the watcher ends.
    if config.watch:
        app.cleanup_ctx.append(_watcher_ctx)
    if config.persist:
        # This run owns the workspace's state: it reserves seq numbers on
        # disk before using them, logs the conversation and clears what
        # killed runs left behind.
        if config.session.conversation is None:
            conversation = try_open_log(config.workspace / STATE_DIR)
            if conversation is not None:
                config.session.use_conversation(conversation)
        config.session.use_seq_reservation(SeqReservation(config.workspace).reserve)
        if turn_listener.subscribed(config.session.hooks) is None:
            store = Checkpoints(config.workspace, manifest.viewer.watch_patterns,
                                manifest.viewer.ignore_patterns)
            config.session.hooks.add(turn_listener.FEATURE_NAME,
                                     turn_listener.CheckpointTurns(store, config.session))
        app.cleanup_ctx.append(_leftovers_ctx)
        app.cleanup_ctx.append(_persistence_ctx)
    # Host features (edit in place, ...) attach themselves, after the
    # checkpoints: each plugin may subscribe to the session's hooks and add
    # routes (docs/hooks.md, "register_session_features").
    for feature_routes in get_plugin_manager().hook.register_session_features(pneuma=pneuma):
        app.router.add_routes(list(feature_routes or []))
    app.cleanup_ctx.append(_agent_ctx)
    return app


def _owner_register_routes(plugin_name: str) -> Any:
    """``register_routes`` as a hook caller that reaches only the plugin
    called ``plugin_name`` (the one that provides the served mode)."""
    pm = get_plugin_manager()
    others = [plugin for name, plugin in pm.list_name_plugin()
              if name != plugin_name and plugin is not None]
    return pm.subset_hook_caller("register_routes", remove_plugins=others)


async def _start_plugins(app: web.Application) -> None:
    await app[PNEUMA].startup()


async def _close_tabs(app: web.Application) -> None:
    await app[PNEUMA].shutdown()
    await app[SESSION].close()


async def _agent_ctx(app: web.Application) -> AsyncIterator[None]:
    session = app[SESSION]
    running: list[Any] = []  # the backend started last (none, or one)

    async def start() -> None:
        backend = await _start_agent(app)
        running[:] = [backend] if backend is not None else []

    async def stop() -> None:
        stopping = running[:]
        running.clear()
        session.backend = None
        for backend in stopping:
            await _stop_agent(backend)

    # Switching conversations stops the agent and starts it again, resuming
    # the other conversation's agent session (pneuma.server.conversation_control).
    session.conversations.stop_agent = stop
    session.conversations.start_agent = start
    await start()
    yield
    await stop()


async def _start_agent(app: web.Application) -> Any:
    """Build and start the backend for the session's current conversation."""
    config = app[CONFIG]
    session = app[SESSION]
    backend = None
    if config.backend is not None:
        manifest = config.mode.manifest
        fresh = not session.has_history and session.agent_session_id is None
        options = BackendOptions(
            workspace=config.workspace,
            mode=config.mode,
            api_url=config.api_url,
            token=config.token,
            session_id=session.id,
            agent_session_id=session.agent_session_id,
            model=session.chosen_model or config.model,
            permission_mode=config.permission_mode or manifest.agent.permission_mode,
            claude_bin=config.claude_bin,
            greeting=manifest.agent.greeting if fresh else None,
            extra_env=dict(config.agent_env),
        )
        backend = config.backend.factory(options, session)
        if backend is None and session.no_agent_reason is None:
            session.no_agent_reason = no_agent_text(config.backend.name, session.id)
    session.backend = backend
    if backend is not None:
        try:
            await backend.start()
        except Exception as exc:
            log.exception("the agent failed to start")
            session.emit({"type": "error", "code": "agent_start_failed",
                          "message": f"The agent failed to start: {exc}"})
    return backend


async def _stop_agent(backend: Any) -> None:
    try:
        await asyncio.wait_for(backend.stop(), 4)
    except Exception:
        log.exception("stopping the agent failed")


async def _watcher_ctx(app: web.Application) -> AsyncIterator[None]:
    config = app[CONFIG]
    stop = app[STOP_EVENT]
    started = asyncio.Event()
    task = asyncio.get_running_loop().create_task(
        watch_workspace(
            config.workspace,
            app[FILE_FILTER],
            app[SELF_WRITES],
            app[PNEUMA].files_changed,
            stop,
            debounce_ms=config.watch_debounce_ms,
            notify=app[SESSION].emit,
            started=started,
        )
    )
    # Until the first watches are in place (walked in a thread), so a change
    # made after the ready line is reported; bounded, so a huge workspace
    # does not hold the ready line back.
    try:
        await asyncio.wait_for(started.wait(), 5)
    except TimeoutError:
        log.warning("the file watcher is still starting")
    yield
    stop.set()
    try:
        await asyncio.wait_for(task, 2)
    except (asyncio.TimeoutError, asyncio.CancelledError):
        task.cancel()
    except Exception:  # the watcher must never block shutdown
        log.exception("file watcher failed")


async def _leftovers_ctx(app: web.Application) -> AsyncIterator[None]:
    """Remove the temp files of writes a kill -9 interrupted, in a worker
    thread: walking a big workspace must not delay the ready line."""
    workspace = app[CONFIG].workspace
    cleaning = asyncio.get_running_loop().run_in_executor(
        None, remove_stale_temp_files, workspace)
    yield
    try:
        await asyncio.wait_for(asyncio.shield(cleaning), 2)
    except asyncio.TimeoutError:
        pass  # a huge workspace: the walk ends in its thread
    except Exception:  # never a reason not to stop
        log.exception("removing stale temp files failed")


def _encoded_state(app: web.Application) -> list[tuple[Path, bytes]]:
    config = app[CONFIG]
    session = app[SESSION]
    return encode_session(
        config.workspace,
        session_id=session.id,
        mode=session.mode,
        backend=session.backend_name,
        agent_session_id=session.agent_session_id,
        last_seq=session.seq,
        conversation_id=session.conversation_id,
    )


def save_now(app: web.Application) -> None:
    write_files(_encoded_state(app))
    app[SESSION].dirty = False


async def _resume_saving(workspace: Path, session: Any) -> None:
    """While saving is paused (a full disk), try again: the conversation
    log writes what waits; checkpoints go on at the next turn once there
    is room (docs/checkpoints.md)."""
    conversation = session.conversation
    if (conversation is not None and conversation.paused is not None
            and await asyncio.to_thread(conversation.resume_saving)):
        session.saving.resumed("conversation")
    if session.saving.is_paused("checkpoints"):
        free = await asyncio.to_thread(lambda: shutil.disk_usage(workspace).free)
        if free >= CHECKPOINT_ROOM:
            session.saving.resumed("checkpoints")


async def _persistence_ctx(app: web.Application) -> AsyncIterator[None]:
    config = app[CONFIG]
    session = app[SESSION]
    loop = asyncio.get_running_loop()
    writing: asyncio.Future[None] | None = None

    async def periodically() -> None:
        nonlocal writing
        while True:
            await asyncio.sleep(config.save_interval)
            if session.conversation is not None and session.conversation.writes:
                # The log's fsyncs, off the event loop (see conversation_log).
                await loop.run_in_executor(None, session.conversation.checkpoint)
            await _resume_saving(config.workspace, session)
            if not session.dirty:
                continue
            # Encoded here, where the session lives; written and fsynced in
            # a worker thread: fsyncs in the event loop would stall a
            # streaming reply for as long as the disk takes. (The
            # conversation is not in it: its log writes each message.)
            files = _encoded_state(app)
            session.dirty = False
            writing = loop.run_in_executor(None, write_files, files)
            try:
                await writing
            except OSError as exc:
                session.dirty = True
                if not session.saving.failed("session", exc):  # a full disk: said once
                    log.exception("could not save the session")
            else:
                session.saving.resumed("session")

    # A restart with nothing new finds the file holding exactly these
    # bytes: rewriting it would cost fsyncs before the first answer.
    session.dirty = False
    try:
        write_files(stale_files(_encoded_state(app)))
    except OSError as exc:
        if not session.saving.failed("session", exc):
            raise
        session.dirty = True  # a full disk at start: saved when it can be
    # Restores made from the terminal while no `pneuma run` was up.
    checkpoints = turn_listener.subscribed(session.hooks)
    if checkpoints is not None:
        await checkpoints.list_restores()
        # The first turn's checkpoint then only compares stats (docs/checkpoints.md).
        checkpoints.start_baseline()

    async def save_soon() -> None:
        files = _encoded_state(app)
        session.dirty = False
        await loop.run_in_executor(None, write_files, files)

    # A switch of conversation is saved at once: a restart resumes that one.
    session.conversations.save_state = save_soon
    task = loop.create_task(periodically())
    yield
    task.cancel()
    if checkpoints is not None:
        checkpoints.stop()
    if writing is not None:
        # A periodic save still being written must land before the final one.
        await asyncio.wait([writing])
    await session.close()
    try:
        save_now(app)
    except OSError as exc:
        if not session.saving.failed("session", exc):
            raise
        log.warning("could not save the session at exit: %s", exc)
    if session.conversation is not None:
        # What is queued is committed, the WAL folded back: one file at rest.
        await loop.run_in_executor(None, session.conversation.close)
    # Saved: a restart goes on right after the last number used.
    SeqReservation(config.workspace).release(session.seq)
