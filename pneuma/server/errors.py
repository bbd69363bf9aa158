"""HTTP answers in the one error shape (docs/errors.md).

Every route answers a failure as ``{"error": {"code": "E_…", "message": …,
"details": {…}, "recoverable": bool, "hint"?: …}}`` with the status its code
implies (``pneuma.core.errors.HTTP_STATUS``). A handler either returns
``error_response(ToolError(...))`` or simply raises the ``ToolError``: the
``error_middleware`` answers it the same way. The middleware also answers
aiohttp's own errors (an unknown route, a wrong method, a body over the size
limit, a plain request to a WebSocket route) and any exception a handler did
not expect in that shape, so that no caller ever has to parse a text page.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from pneuma.core.errors import ErrorCode, ToolError
from pneuma.core.state_files import UnsafeStatePath
from pneuma.server.config import CONFIG

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# aiohttp's own error statuses, read as the code whose status is closest.
_CODE_OF_STATUS: dict[int, ErrorCode] = {
    400: "E_BAD_ARGS",
    401: "E_UNAUTHORIZED",
    403: "E_FORBIDDEN",
    404: "E_NOT_FOUND",
    405: "E_UNSUPPORTED",
    409: "E_CONFLICT",
    413: "E_TOO_LARGE",
    415: "E_ENCODING",
    422: "E_PARSE_FAIL",
    503: "E_UNAVAILABLE",
    504: "E_TIMEOUT",
}
# Headers of an aiohttp error worth keeping (Allow says which methods a route takes).
_KEPT_HEADERS = ("Allow", "WWW-Authenticate", "Retry-After")
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])/(?:[^\s'\"():,;]+/)*([^\s'\"():,;/]+)")


def json_text(obj: object) -> str:
    """JSON with non-ASCII text as it is, except lone surrogates (a caller
    may send "\\ud800" in JSON and see it quoted back): those stay escaped,
    since UTF-8 cannot carry them and the answer must still go out."""
    text = json.dumps(obj, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


_dumps = json_text


def error_response(error: ToolError) -> web.Response:
    """The HTTP answer for ``error``: its JSON body with the status its code implies."""
    return web.json_response(error.to_dict(), status=error.http_status, dumps=_dumps)


def _from_http_exception(exc: web.HTTPException, request: web.Request) -> ToolError:
    status = exc.status
    code: ErrorCode = _CODE_OF_STATUS.get(status, "E_BAD_ARGS" if status < 500 else "E_INTERNAL")
    default_text = f"{status}: {exc.reason}"
    text = (exc.text or "").strip()
    given = text if text and text != default_text else None
    where = f"{request.method} {request.path}"
    details: dict[str, object] = {"status": status}
    hint = None
    recoverable = None
    unrouted = getattr(request.match_info, "http_exception", None) is not None
    if isinstance(exc, web.HTTPMethodNotAllowed):
        allowed = sorted(exc.allowed_methods)
        details.update(reason="method_not_allowed", method=exc.method, allowed=allowed)
        message = f"{request.path} does not answer {exc.method}; it answers {', '.join(allowed)}"
        hint = f"send {' or '.join(allowed)}"
        recoverable = True  # the same request with another method may well work
    elif status == 404 and unrouted:
        details["reason"] = "no_route"  # not a missing file: nothing answers this path
        message = f"no route {where} on this Pneuma server"
        if request.path.startswith("/api/"):
            hint = "docs/protocol.md lists the routes of the HTTP API"
    elif status == 413:
        message = given or f"the body of {where} is too large"
    elif status == 400 and "upgrade hdr" in text.lower():
        # aiohttp's answer to a plain request on a WebSocket route.
        details["reason"] = "websocket_only"
        message = f"{request.path} is a WebSocket endpoint, not a page or a JSON route"
        hint = "connect with a WebSocket client (Upgrade: websocket)"
    else:
        message = given or f"{where}: {exc.reason}"
    return ToolError(code, message, details=details, hint=hint, recoverable=recoverable)


def _without_paths(text: str, workspace: Path | None) -> str:
    """``text`` with the workspace's absolute path made relative and any other
    absolute path cut to its last part: an error answer must not tell where
    the person's files live on disk."""
    if workspace is not None:
        for root in sorted({str(workspace), str(workspace.resolve())}, key=len, reverse=True):
            text = re.sub(re.escape(root) + r"(/|(?![\w.-]))",
                          lambda m: "" if m.group(1) else ".", text)
    return _ABSOLUTE_PATH.sub(lambda m: f"…/{m.group(1)}", text)


def _internal_error(exc: Exception, request: web.Request) -> ToolError:
    config = request.app.get(CONFIG)
    detail = _without_paths(str(exc), config.workspace if config is not None else None)
    kind = type(exc).__name__
    message = f"{request.method} {request.path} failed: {kind}" + (
        f": {detail[:300]}" if detail else "")
    return ToolError("E_INTERNAL", message, details={"exception": kind},
                     hint="This is a bug in Pneuma or in the mode serving this route; the "
                          "traceback is in the output of `pneuma run`.")


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure of a handler, answered in the one shape: a ``ToolError``
    as it is, an aiohttp error (status 400 and up) as the code of its status,
    any other exception as ``E_INTERNAL`` (logged with its traceback).

    Left alone: redirects and other non-error ``HTTPException``\\ s, an error a
    handler raised with a JSON body of its own, and anything raised once a
    response (a WebSocket, a stream) has started: there is no answer to
    replace any more, so aiohttp closes the connection."""
    try:
        return await handler(request)
    except ToolError as error:
        if request.writer.output_size > 0:
            raise
        return error_response(error)
    except web.HTTPException as exc:
        if exc.status < 400 or exc.content_type == "application/json" or \
                request.writer.output_size > 0:
            raise
        response = error_response(_from_http_exception(exc, request))
        for name in _KEPT_HEADERS:
            if name in exc.headers:
                response.headers[name] = exc.headers[name]
        return response
    except UnsafeStatePath as exc:
        # A link planted under .pneuma/ was refused: the request is not at
        # fault, but nothing was written through it either.
        if request.writer.output_size > 0:
            raise
        config = request.app.get(CONFIG)
        log.warning("%s %s: %s", request.method, request.path, exc)
        return error_response(ToolError(
            "E_DENY_PATH", _without_paths(str(exc), config.workspace if config else None),
            details={"reason": "state_link"}))
    except TimeoutError as exc:  # aiohttp itself answers an unhandled timeout with 504
        if request.writer.output_size > 0:
            raise
        log.warning("%s %s timed out", request.method, request.path, exc_info=exc)
        return error_response(ToolError(
            "E_TIMEOUT", f"{request.method} {request.path} timed out",
            hint="Try again; if it keeps happening, the server log says what was waited for."))
    except RecursionError:
        # Python's JSON parser (and whatever walks what it parsed) gives up on
        # a body nested thousands deep: the request is at fault, not the route.
        if request.writer.output_size > 0:
            raise
        log.warning("%s %s: input nested too deeply", request.method, request.path)
        return error_response(ToolError(
            "E_BAD_ARGS", f"{request.method} {request.path}: the request is nested too "
            "deeply to be read", details={"reason": "too_deep"}))
    except Exception as exc:
        if request.writer.output_size > 0:
            raise  # aiohttp logs it and closes the connection
        log.exception("%s %s failed", request.method, request.path)
        return error_response(_internal_error(exc, request))
