"""Agents that connect by WebSocket (``/ws/cli/{sid}``, ADR-002 §3.1)."""

from __future__ import annotations

from aiohttp import web

from pneuma.server.security import json_error


async def cli_socket(request: web.Request) -> web.StreamResponse:
    return json_error(501, "not_implemented", "pending")
