"""Pneuma as the ACP client its agent talks to (``acp.Client``): the methods
the agent calls on us, each handed to the backend or served here.

File reads and writes go through the workspace sandbox (``fs.py``); a
refusal is a JSON-RPC error whose message is the E_* error's own, with the
code and hint in its data, so the agent reads why. Terminals are not
offered (the client capabilities say so), and extension methods are
answered "not found".
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from pneuma.api import ToolError

from .host import AcpHost

if TYPE_CHECKING:
    from acp.schema import PermissionOption, ToolCallUpdate


log = logging.getLogger(__name__)

# JSON-RPC error codes for the sandbox's refusals: ACP's "resource not
# found" for a missing file, the server-error range for the rest.
_NOT_FOUND = -32002
_REFUSED = -32000


def request_error(exc: ToolError) -> RequestError:
    """A ToolError as the JSON-RPC error the agent receives."""
    code = _NOT_FOUND if exc.code == "E_NOT_FOUND" else _REFUSED
    data: dict[str, Any] = {"code": exc.code}
    if exc.hint:
        data["hint"] = exc.hint
    return RequestError(code, f"{exc.code}: {exc.message}", data)


class AcpClient:
    """The client side of one agent process's connection."""

    def __init__(self, backend: AcpHost) -> None:
        self._backend = backend

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self._backend.on_update(session_id, update)

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption],
                                 **kwargs: Any) -> RequestPermissionResponse:
        return await self._backend.on_permission(session_id, tool_call, options)

    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        self._backend.check_session(session_id)
        try:
            text = await asyncio.to_thread(self._backend.files.read, path, line, limit)
        except ToolError as exc:
            log.info("acp: fs/read_text_file %s refused: %s", path, exc.message)
            raise request_error(exc) from None
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        self._backend.check_session(session_id)
        try:
            await asyncio.to_thread(self._backend.files.write, path, content)
        except ToolError as exc:
            log.info("acp: fs/write_text_file %s refused: %s", path, exc.message)
            raise request_error(exc) from None
        return WriteTextFileResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
