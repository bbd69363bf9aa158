"""The agent's stdout as ACP messages, with whatever is not one set aside.

The ``acp`` library's connection (request ids, dispatch, the schema) takes
its messages from a ``Transport``. Its own stdio transport logs a line that
is not JSON and goes on, but a JSON value that is not an object, or an id
that is not a number or a string, ends its receive loop, and a line of any
length is gathered whole in memory. This transport stands in front of it:
every line is bounded, and what is not a JSON-RPC message of a shape the
connection can take is reported through ``on_problem`` (a warning in the
log and the page) and dropped, so the session goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from acp import CLIENT_METHODS
from acp.schema import (
    ReadTextFileRequest,
    RequestPermissionRequest,
    SessionNotification,
    WriteTextFileRequest,
)
from pydantic import BaseModel, ValidationError

log = logging.getLogger(__name__)

# A write_text_file carries a whole file (the host's write limit is 5 MiB,
# more once JSON-escaped): lines beyond this are dropped unread.
LINE_LIMIT = 32 * 1024 * 1024
# What of a bad line a warning quotes.
QUOTE_CHARS = 120

_KNOWN_METHODS = frozenset(CLIENT_METHODS.values())
# The params each method the client serves must have, checked here so that
# a bad one is told (the library would answer it, or log it, silently).
_PARAMS: dict[str, type[BaseModel]] = {
    CLIENT_METHODS["session_update"]: SessionNotification,
    CLIENT_METHODS["session_request_permission"]: RequestPermissionRequest,
    CLIENT_METHODS["fs_read_text_file"]: ReadTextFileRequest,
    CLIENT_METHODS["fs_write_text_file"]: WriteTextFileRequest,
}


def quote(text: str) -> str:
    """A short, one-line excerpt of ``text`` for a warning."""
    flat = " ".join(text.split())
    return flat if len(flat) <= QUOTE_CHARS else flat[:QUOTE_CHARS] + "…"


def first_error(exc: ValidationError) -> str:
    """The first of a validation's errors, as "where: what"."""
    errors = exc.errors()
    if not errors:
        return str(exc)
    where = ".".join(str(part) for part in errors[0]["loc"]) or "params"
    return f"{where}: {errors[0]['msg']}"


def problem_with(message: Any) -> str | None:
    """Why ``message`` (a decoded JSON value) is not one the connection can
    take, or None when it is."""
    if not isinstance(message, dict):
        return f"a JSON {type(message).__name__}, not a JSON-RPC object"
    if "id" in message and not (message["id"] is None or isinstance(message["id"], (int, str))
                                and not isinstance(message["id"], bool)):
        return "an id that is neither a number nor a string"
    method = message.get("method")
    if method is None:
        if "id" not in message:
            return "neither a request, a notification nor a response"
        if "error" in message and not isinstance(message["error"], dict):
            return "an error that is not an object"
        return None
    if not isinstance(method, str):
        return "a method name that is not a string"
    if method.startswith("_"):
        return None  # an extension: answered "not found" or ignored by the library
    if method not in _KNOWN_METHODS:
        return f"the method {method!r}, which Pneuma does not know"
    model = _PARAMS.get(method)
    if model is not None:
        try:
            model.model_validate(message.get("params"))
        except ValidationError as exc:
            return f"{method} with bad params ({first_error(exc)})"
    return None


class CheckedLineTransport:
    """``acp``'s ``Transport`` over the agent's pipes: one JSON-RPC message
    per line, each checked (``problem_with``) before the connection sees it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 on_problem: Callable[[str], None], line_limit: int = LINE_LIMIT) -> None:
        self._reader = reader
        self._line_limit = line_limit  # the reader's own limit (what it overruns at)
        self._writer = writer
        self._on_problem = on_problem
        self._send_lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        async with self._send_lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if line is None:
                return None
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                message = json.loads(text)
            except ValueError:
                self._on_problem(f"a line that is not JSON: {quote(text)}")
                continue
            problem = problem_with(message)
            if problem is not None:
                self._on_problem(f"{problem}: {quote(text)}")
                if isinstance(message, dict) and "id" in message and isinstance(
                        message.get("method"), str) and problem.startswith(message["method"]):
                    # A request with bad params still gets its answer.
                    await self._answer_invalid(message["id"], problem)
                continue
            checked: dict[str, Any] = message
            return checked

    async def _answer_invalid(self, request_id: Any, problem: str) -> None:
        try:
            await self.send({"jsonrpc": "2.0", "id": request_id,
                             "error": {"code": -32602, "message": f"Invalid params: {problem}"}})
        except (ConnectionError, RuntimeError):
            pass

    async def _read_line(self) -> bytes | None:
        """The next line; None at the end. A line over ``LINE_LIMIT`` is
        skipped (and told) without being held in memory."""
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError:
            await self._skip_long_line()
            self._on_problem(f"a line longer than {self._line_limit} bytes (skipped)")
            return b""

    async def _skip_long_line(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return

    async def close(self) -> None:
        try:
            self._writer.close()
        except (OSError, RuntimeError):
            pass
