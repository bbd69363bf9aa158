"""JSON-RPC 2.0 over a child's stdio, one JSON object per line, as
``codex app-server`` speaks it: we send requests and notifications, it
answers, notifies, and sends requests of its own (approvals) that we answer.

The method names and parameter shapes are those of the protocol schema the
binary prints (``codex app-server generate-json-schema``, v0.169.0)."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

LINE_LIMIT = 64 * 1024 * 1024  # items carry whole command outputs and diffs

Handler = Callable[[str, dict[str, Any], Any], Awaitable[None] | None]
"""Called with (method, params, request id or None for a notification)."""


class RpcError(Exception):
    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('message') or error}")
        self.error = error


class RpcPeer:
    """Our end of the conversation with one app-server process."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 handler: Handler) -> None:
        self._reader = reader
        self._writer = writer
        self._handler = handler
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._write_lock = asyncio.Lock()
        self.closed = asyncio.Event()

    async def _write(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False) + "\n"
        async with self._write_lock:
            self._writer.write(line.encode("utf-8"))
            await self._writer.drain()

    async def request(self, method: str, params: dict[str, Any], timeout: float = 60.0) -> Any:
        if self.closed.is_set():
            raise ConnectionError("the Codex app-server has exited")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        await self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def respond(self, request_id: Any, result: dict[str, Any]) -> None:
        await self._write({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def respond_error(self, request_id: Any, code: int, message: str) -> None:
        await self._write({"jsonrpc": "2.0", "id": request_id,
                           "error": {"code": code, "message": message}})

    async def run(self) -> None:
        """Read until the process closes its stdout; then fail what waits."""
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    log.debug("codex: skipped a line that is not JSON: %.200r", line)
                    continue
                if isinstance(message, dict):
                    await self._dispatch(message)
        finally:
            self.closed.set()
            for method, future in list(self._pending.values()):
                if not future.done():
                    future.set_exception(ConnectionError(f"{method}: the Codex app-server exited"))
            self._pending.clear()

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # an answer to one of ours
            entry = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if entry is None or entry[1].done():
                return
            name, future = entry
            if "error" in message:
                future.set_exception(RpcError(name, message.get("error") or {}))
            else:
                future.set_result(message.get("result"))
            return
        params = message.get("params")
        try:
            outcome = self._handler(str(method), params if isinstance(params, dict) else {},
                                    message.get("id"))
            if outcome is not None:
                await outcome
        except Exception:  # one bad message must not end the conversation
            log.exception("codex: handling %s failed", method)
