"""The workspace as it was at a checkpoint, read-only, for "Compare" and the
timeline under the viewer (docs/checkpoints.md, "Compare and the timeline"):

    GET /api/checkpoints/{ref}/state/{side}/files          the files a viewer is given
    GET /api/checkpoints/{ref}/state/{side}/content/{path}  one file's bytes

``side`` is ``before`` (the checkpoint itself: the workspace as the turn
found it) or ``after`` (as the turn left it: recorded at its end, else at
the next checkpoint, else the workspace now, for a turn still running).

Everything is read from the checkpoint store (its manifests and blobs);
nothing is restored or written, so the live viewer and the file watcher see
nothing. A path is looked up in the state's own map, never opened by the
name a request gives, so only watched files of that state are served.

Workspace content is untrusted: the bytes go out with the same policy as
``/content/`` (``csp.CONTENT_POLICY``: a sandbox without
``allow-same-origin``, so an HTML file opened as a document runs in an
opaque origin and cannot call the API) and ``nosniff``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aiohttp import web

from pneuma.checkpoints import Checkpoints, FileMap, turn_listener
from pneuma.core.errors import ToolError
from pneuma.server.config import FILE_FILTER, SESSION
from pneuma.server.csp import CONTENT_POLICY
from pneuma.server.routes_files import content_type_of
from pneuma.server.watcher import MAX_INLINE_BYTES

Side = Literal["before", "after"]
SIDES: tuple[Side, ...] = ("before", "after")
# Resolved states kept for the next request (a viewer asks for the list, then
# for each image of it): few, a map is about 200 bytes a file.
_CACHED_STATES = 8

_NOT_KEPT = {"too_big": "too big to keep", "hard_link": "a hard-linked file is not read",
             "unreadable": "it could not be read"}

ROUTES = web.RouteTableDef()


@dataclass(frozen=True)
class State:
    """One side of a checkpoint: its files, and where their bytes are.
    ``live``: the turn has not ended and nothing came after it, so the
    state is the workspace now, read from disk (hashed, never stored)."""

    ref: str
    side: Side
    files: FileMap
    live: bool

    def read(self, store: Checkpoints, path: str) -> bytes:
        entry = self.files.get(path)
        if entry is None:
            raise ToolError("E_NOT_FOUND", f"{path} is not in checkpoint {self.ref} "
                            f"({self.side} the turn)",
                            details={"path": path, "ref": self.ref, "side": self.side})
        if entry.hash is None:
            raise ToolError("E_TOO_LARGE" if entry.skipped == "too_big" else "E_UNSUPPORTED",
                            f"{path} was not kept in checkpoint {self.ref} "
                            f"({_NOT_KEPT.get(entry.skipped or '', 'not kept')})",
                            details={"path": path, "reason": entry.skipped})
        if self.live:
            return _read_live(store, path)
        return store.read_blob(entry.hash, path)


def _read_live(store: Checkpoints, path: str) -> bytes:
    try:
        fd, _ = store.sandbox.open_file(path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise ToolError("E_NOT_FOUND", f"{path} is gone from the workspace",
                        details={"path": path}) from None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(store.policy.max_file_bytes)


class StateCache:
    """The newest few resolved states of one store, by (ref, side, seq).
    Only final states are kept: a live one changes with the workspace."""

    def __init__(self) -> None:
        self._states: OrderedDict[tuple[str, str, int], State] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, int]) -> State | None:
        with self._lock:
            state = self._states.get(key)
            if state is not None:
                self._states.move_to_end(key)
            return state

    def put(self, key: tuple[str, str, int], state: State) -> None:
        if state.live:
            return
        with self._lock:
            self._states[key] = state
            while len(self._states) > _CACHED_STATES:
                self._states.popitem(last=False)


_CACHES: dict[Path, StateCache] = {}


def resolve_state(store: Checkpoints, ref: str, side: str) -> State:
    """The files of ``side`` of checkpoint ``ref`` (E_BAD_ARGS for another
    side, E_NOT_FOUND for a ref the store does not keep)."""
    if side not in SIDES:
        raise ToolError("E_BAD_ARGS", f"{side!r} is not a side: 'before' (as the turn found "
                        "the workspace) or 'after' (as it left it)", details={"side": side})
    checkpoint = store.get(ref)
    cache = _CACHES.setdefault(store.workspace, StateCache())
    key = (checkpoint.ref, side, checkpoint.seq)
    cached = cache.get(key)
    if cached is not None and (side == "before" or checkpoint.ended):
        return cached
    if side == "before":
        state = State(checkpoint.ref, "before", checkpoint.files, live=False)
    elif checkpoint.after is not None:
        state = State(checkpoint.ref, "after", checkpoint.after, live=False)
    else:
        # Not ended: as the next checkpoint found it, else the workspace now.
        kept = [c for c, _ in store.history()]
        later = [c for c in kept if c.seq > checkpoint.seq]
        if later:
            state = State(checkpoint.ref, "after", later[0].files, live=False)
        else:
            state = State(checkpoint.ref, "after", store.current(), live=True)
    if side == "before" or checkpoint.ended or not state.live:
        cache.put(key, state)
    return state


def file_list(store: Checkpoints, state: State, is_text: Any) -> list[dict[str, Any]]:
    """The state's files in the shape of ``GET /api/files``: text content
    inline (up to the same bound), everything else as ``binary``."""
    rows: list[dict[str, Any]] = []
    for path in sorted(state.files):
        entry = state.files[path]
        content: str | None = None
        if entry.hash is not None and is_text(path) and entry.size <= MAX_INLINE_BYTES:
            try:
                content = state.read(store, path).decode("utf-8")
            except (ToolError, UnicodeDecodeError):
                content = None
        row: dict[str, Any] = {"path": path, "content": content, "size": entry.size,
                               "mtime": entry.mtime_ns / 1e9}
        if content is None:
            row["binary"] = True
        if entry.hash is None:
            row["notKept"] = entry.skipped or "unreadable"
        rows.append(row)
    return rows


def session_store(hooks: Any) -> Checkpoints:
    """The checkpoint store of the session whose hooks are ``hooks``
    (E_UNAVAILABLE for a session that keeps none)."""
    turns = turn_listener.subscribed(hooks)
    store = turns.store if turns is not None else None
    if store is None:
        raise ToolError("E_UNAVAILABLE", "this server keeps no checkpoints (it saves nothing "
                        "in the workspace)", details={"reason": "no_checkpoints"})
    return store


def _store(request: web.Request) -> Checkpoints:
    return session_store(request.app[SESSION].hooks)


@ROUTES.get("/api/checkpoints/{ref}/state/{side}/files")
async def state_files(request: web.Request) -> web.Response:
    store = _store(request)
    ref, side = request.match_info["ref"], request.match_info["side"]
    is_text = request.app[FILE_FILTER].is_text

    def read() -> dict[str, Any]:
        state = resolve_state(store, ref, side)
        return {"ref": state.ref, "side": side, "live": state.live,
                "files": file_list(store, state, is_text)}

    return web.json_response(await asyncio.to_thread(read))


@ROUTES.get("/api/checkpoints/{ref}/state/{side}/content/{path:.+}")
async def state_content(request: web.Request) -> web.Response:
    store = _store(request)
    ref, side, path = (request.match_info["ref"], request.match_info["side"],
                       request.match_info["path"])

    def read() -> bytes:
        return resolve_state(store, ref, side).read(store, path)

    data = await asyncio.to_thread(read)
    response = web.Response(body=data, content_type=content_type_of(path))
    if content_type_of(path).startswith("text/") or path.lower().endswith((".svg", ".json", ".js")):
        response.charset = "utf-8"
    # Workspace content, as /content/ serves it (pneuma/server/csp.py).
    response.headers["Content-Security-Policy"] = CONTENT_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-cache"
    return response


def setup(app: web.Application) -> None:
    app.router.add_routes(ROUTES)
