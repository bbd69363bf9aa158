"""``/ws/cli/{sid}``: the NDJSON socket of ADR-002 for agents that connect
by WebSocket. Filled in by pneuma.agents.socket_agent."""

from __future__ import annotations

from aiohttp import web


def setup(app: web.Application) -> None:
    from pneuma.agents.socket_agent import cli_socket

    app.router.add_get("/ws/cli/{sid}", cli_socket)
