"""Who may talk to the server: the token, the Host and the Origin.

The server runs an agent that may have every permission, so any page the
person visits must not be able to drive it. Every request must carry the
session token (``Authorization: Bearer``, ``?token=``, or the HttpOnly
cookie the first page load sets), and a request whose ``Host`` or
``Origin`` is not this server (DNS rebinding, cross-site pages) is refused.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web

# aiohttp is imported by the middleware only: `pneuma run` answers its
# first requests (pneuma.server.early_server) with these same checks before
# aiohttp is loaded.

COOKIE_PREFIX = "pneuma_token"


def cookie_name(host: str) -> str:
    """The token cookie of the server answering as ``host`` (``127.0.0.1:17007``).

    Browsers keep cookies per host name, not per port, so every Pneuma server
    on 127.0.0.1 (a second ``pneuma run``, the headless WebGAL preview) would
    otherwise overwrite the others' cookie and log their tabs out."""
    port = host.rpartition(":")[2] if ":" in host.rpartition("]")[2] else "80"
    return f"{COOKIE_PREFIX}_{port}"

Handler = Callable[["web.Request"], Awaitable["web.StreamResponse"]]


def allowed_hosts(host: str, port: int) -> set[str]:
    names = {host, "127.0.0.1", "localhost", "[::1]"}
    if host in ("0.0.0.0", "::"):
        names.discard(host)
    return {f"{name}:{port}" for name in names} | ({host} if port == 80 else set())


def choose_token(authorization: str, query_token: str | None,
                 cookies: Mapping[str, str], host: str) -> tuple[str | None, str]:
    """The token a request presents and where: the ``Authorization`` header
    first, then ``?token=``, then this server's cookie."""
    if authorization.startswith("Bearer "):
        return authorization[7:].strip(), "header"
    if query_token:
        return query_token, "query"
    cookie = cookies.get(cookie_name(host))
    if cookie:
        return cookie, "cookie"
    return None, "none"


def presented_token(request: web.Request) -> tuple[str | None, str]:
    return choose_token(request.headers.get("Authorization", ""), request.query.get("token"),
                        request.cookies, request.headers.get("Host", ""))


def token_matches(presented: str, token: str) -> bool:
    return hmac.compare_digest(presented.encode(), token.encode())


def make_security_middleware(token: str, hosts: Callable[[], set[str]]):
    from aiohttp import web

    from pneuma.core.errors import ToolError
    from pneuma.server.errors import error_response

    @web.middleware
    async def security(request: web.Request, handler: Handler) -> web.StreamResponse:
        allowed = hosts()
        host = request.headers.get("Host", "")
        if host not in allowed:
            return error_response(ToolError(
                "E_FORBIDDEN", f"Host {host!r} is not this Pneuma server",
                details={"reason": "host", "host": host},
                hint="open it as http://127.0.0.1:<port>/ (the URL `pneuma run` printed)"))
        origin = request.headers.get("Origin")
        if origin is not None and origin not in {f"http://{h}" for h in allowed}:
            return error_response(ToolError(
                "E_FORBIDDEN", f"requests from {origin!r} are not allowed",
                details={"reason": "origin", "origin": origin},
                hint="only pages served by this Pneuma server may call it"))
        presented, source = presented_token(request)
        if presented is None or not token_matches(presented, token):
            return error_response(ToolError(
                "E_UNAUTHORIZED",
                "a valid session token is required" if presented is None
                else "the session token is not this session's",
                details={"reason": "missing_token" if presented is None else "wrong_token"},
                hint="open the URL printed by `pneuma run`, or send "
                     "Authorization: Bearer $PNEUMA_TOKEN"))
        response = await handler(request)
        if source == "query" and request.method == "GET" and not response.prepared:
            # Pages the server serves later (viewer frames, the game engine)
            # are then authorised without carrying the token in their URLs.
            response.set_cookie(cookie_name(host), token, httponly=True, samesite="Strict",
                                path="/")
        return response

    return security
