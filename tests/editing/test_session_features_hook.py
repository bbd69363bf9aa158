"""register_session_features: a plugin attaches a feature to the session
without the server naming it (docs/hooks.md)."""

from __future__ import annotations

from aiohttp import web

from pneuma import hookimpl


class Greeter:
    async def before_turn(self, turn) -> None:
        turn.prefixes.append("<note>from a feature</note>")


class FeaturePlugin:
    @hookimpl
    def register_session_features(self, pneuma):
        pneuma.session.hooks.add("greeter", Greeter())

        async def hello(request: web.Request) -> web.Response:
            return web.json_response({"workspace": pneuma.workspace.name})

        return [web.get("/api/greeter/hello", hello)]


async def test_a_plugins_feature_gets_routes_and_the_turns(make_server, register_plugin):
    with register_plugin(FeaturePlugin(), "greeter-plugin"):
        server = await make_server()
        assert "greeter" in server.session.hooks.names()
        assert "hand_edits" in server.session.hooks.names()  # the host's own
        response = await server.get("/api/greeter/hello")
        assert response.status == 200
        assert (await response.json())["workspace"] == server.workspace.name
        tab = await server.tab()
        await tab.send({"type": "user_message", "content": "hi", "client_msg_id": "c1"})
        calls = await server.backend.wait_call("send_user_message")
        assert calls[0][1].startswith("<note>from a feature</note>")
