"""Hostile but harmless input gets a 4xx in the one error shape, never a 500.

A body nested 100,000 deep to every POST route of every mode's server (and
the native backend's), over-long names and paths and lone surrogates on the
file routes, a malformed diff to ``/api/confirmations``: each is the
caller's mistake, so each answer is a 4xx with an ``E_*`` code and a
message (docs/errors.md), and none names the workspace's place on disk.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pneuma.host.registry import get_plugin_manager, load_modes
from pneuma.testing import serve

MODES = sorted(load_modes(get_plugin_manager()).modes)
DEEP_ARRAY = "[" * 100_000
DEEP_OBJECT = '{"a":' * 100_000


def _post_routes(app, session_id: str) -> list[str]:
    def fill(match: re.Match[str]) -> str:
        return {"sid": session_id}.get(match.group(1).split(":")[0], "x")

    paths = set()
    for resource in app.router.resources():
        for route in resource:
            if route.method in ("POST", "*"):
                paths.add(re.sub(r"\{([^}]+)\}", fill, resource.canonical))
    return sorted(paths)


async def _answer(response) -> tuple[int, str, str]:
    body = await response.json(content_type=None)
    error = body.get("error") or {}
    return response.status, error.get("code", ""), error.get("message", "")


def _is_client_error(status: int, code: str, message: str) -> bool:
    return 400 <= status < 500 and code.startswith("E_") and bool(message)


async def _deep_bodies_refused(server) -> list[tuple[str, int, str]]:
    routes = _post_routes(server.app, server.session_id)
    assert "/api/files" in routes and "/api/confirmations" in routes
    wrong = []
    for path in routes:
        for body in (DEEP_ARRAY, DEEP_OBJECT):
            async with server.session.post(server.url + path, data=body, headers={
                    **server.auth, "Content-Type": "application/json"}) as r:
                status, code, message = await _answer(r)
            # A route taking raw bytes (an artifact upload) may store them;
            # a JSON route must refuse them as the caller's mistake.
            if status >= 500 or (status >= 400 and not _is_client_error(status, code, message)):
                wrong.append((path, status, code))
    return wrong


@pytest.mark.parametrize("mode", MODES)
async def test_a_deeply_nested_body_is_a_client_error_on_every_post_route(mode, tmp_path):
    async with serve(mode, tmp_path / "ws", backend="none", watch=False) as server:
        assert await _deep_bodies_refused(server) == []


async def test_a_deeply_nested_body_is_a_client_error_on_the_native_routes(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never called here
    async with serve("doc", tmp_path / "ws", backend="native", watch=False) as server:
        assert "/api/artifacts" in _post_routes(server.app, server.session_id)
        assert await _deep_bodies_refused(server) == []


async def test_tool_arguments_nested_deep_but_parseable_are_a_client_error(tmp_path):
    nested = "[" * 900 + "]" * 900
    async with serve("doc", tmp_path / "ws", backend="none", watch=False) as server:
        async with server.session.post(
                server.url + "/api/tools/read_file", data='{"path": ' + nested + "}",
                headers={**server.auth, "Content-Type": "application/json"}) as r:
            assert _is_client_error(*await _answer(r))


LONG_NAME = "n" * 300 + ".txt"
LONG_PATH = "/".join(["d" * 200] * 25) + "/f.txt"  # 5,000 bytes, each name legal
BAD_PATHS = [LONG_NAME, LONG_PATH, "a/" + LONG_NAME, "\ud800.txt", "x\udfff/y.md"]


async def _file_routes(server, rel: str) -> dict[str, tuple[int, str, str]]:
    answers = {}
    async with server.session.get(server.url + "/api/files/read", params={"path": rel},
                                  headers=server.auth) as r:
        answers["read"] = await _answer(r)
    async with server.session.delete(server.url + "/api/files", params={"path": rel},
                                     headers=server.auth) as r:
        answers["delete"] = await _answer(r)
    async with server.session.post(server.url + "/api/files", headers=server.auth,
                                   json={"path": rel, "content": "x"}) as r:
        answers["write"] = await _answer(r)
    return answers


@pytest.mark.parametrize("rel", BAD_PATHS, ids=["name300", "path5000", "nested300",
                                                "surrogate", "surrogate_dir"])
async def test_an_impossible_file_name_is_a_client_error_on_every_file_route(rel, tmp_path):
    async with serve("doc", tmp_path / "ws", backend="none", watch=False) as server:
        answers = await _file_routes(server, rel)
        for route, (status, code, message) in answers.items():
            assert _is_client_error(status, code, message), (route, status, code, message)
            # In a URL a lone surrogate cannot arrive as such (it is sent as
            # UTF-8's replacement), so there a missing file is a fair answer.
            surrogate = any("\ud800" <= c <= "\udfff" for c in rel)
            fair = ("E_BAD_ARGS", "E_DENY_PATH") + (
                ("E_NOT_FOUND",) if route != "write" and surrogate else ())
            assert code in fair, (route, code)
            assert str(tmp_path) not in message


@pytest.mark.parametrize("raw", ["n" * 300 + ".html", "/".join(["d" * 200] * 25),
                                 "%ED%A0%80.txt", "%FF%FE/x.svg"])
async def test_an_impossible_name_under_content_is_a_client_error(raw, tmp_path):
    async with serve("doc", tmp_path / "ws", backend="none", watch=False) as server:
        async with server.session.get(f"{server.url}/content/{raw}", headers=server.auth) as r:
            status, code, message = await _answer(r)
        assert 400 <= status < 500 and code.startswith("E_") and message, (status, code)
        assert str(tmp_path) not in message


@pytest.mark.parametrize("diff", [
    {"type": "line", "hunks": [{"linesOld": 5, "linesNew": ["a"]}]},
    {"type": "line", "hunks": [None]},
    {"type": "line", "hunks": [{"startOld": "1", "linesOld": [], "linesNew": []}]},
    {"type": "line", "hunks": [{"linesOld": [1, {}], "linesNew": []}]},
    {"type": "line", "hunks": "abc"},
    {"type": "words", "hunks": []},
])
async def test_a_malformed_diff_to_confirmations_is_bad_args(diff, tmp_path):
    async with serve("doc", tmp_path / "ws", backend="none", watch=False) as server:
        async with server.session.post(server.url + "/api/confirmations", headers=server.auth,
                                       json={"kind": "write",
                                             "details": {"path": "a.md", "diff": diff}}) as r:
            status, code, message = await _answer(r)
        assert (status, code) == (400, "E_BAD_ARGS"), message
        assert "details.diff" in message


_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")),
                 min_size=1, max_size=3).map(lambda s: s * 120)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_names)
def test_any_long_name_is_refused_by_the_sandbox_not_by_the_os(name, tmp_path):
    from pneuma.core.errors import ToolError
    from pneuma.core.sandbox import Sandbox

    sandbox = Sandbox(tmp_path)
    try:
        path = sandbox.resolve(name)
    except ToolError as error:
        assert error.code in ("E_BAD_ARGS", "E_DENY_PATH")
        assert str(tmp_path) not in error.message
        return
    path.exists()  # a name the sandbox lets through is one the OS can take


# Any text, lone surrogates included, in the fields the host's JSON routes read.
_FIELDS = [("/api/viewer/action", "actionId"), ("/api/files", "path"),
           ("/api/files", "content"), ("/api/confirmations", "kind"),
           ("/api/captures", "name"), ("/api/workspace/scaffold", "clear"),
           ("/api/tools/list_files", "path")]


# st.text() leaves out surrogates; these put them in on purpose.
_any_text = st.one_of(
    st.text(max_size=40),
    st.text(st.sampled_from(["\ud800", "\udfff", "a", "/", ".", "é", "\x00"]), max_size=12))


def _post_json(url: str, token: str, body: str) -> tuple[int, dict]:
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=body.encode("utf-8"), method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            return error.code, json.loads(raw)
        except ValueError:
            return error.code, {"raw": raw[:200].decode("utf-8", "replace")}


async def test_any_text_in_any_field_is_answered_in_the_error_shape(tmp_path):
    import asyncio
    import json

    async with serve("doc", tmp_path / "ws", backend="none", watch=False) as server:
        token = server.auth["Authorization"].split(" ", 1)[1]

        @settings(max_examples=150, deadline=None)
        @given(route=st.sampled_from(_FIELDS), text=_any_text)
        def property_holds(route, text):
            path, field = route
            value: object = [text] if field == "clear" else text
            body = json.dumps({field: value, **({"kind": "write", "details": {
                "path": text, "diff": {"type": "line", "hunks": []}}} if field == "kind" else {})})
            status, answer = _post_json(server.url + path, token, body)
            assert status < 500 or status == 503, (path, status, answer)
            if status >= 400:
                assert answer.get("error", {}).get("code", "").startswith("E_"), answer

        await asyncio.to_thread(property_holds)


async def test_a_name_the_mimetypes_module_reads_as_a_url_is_served(tmp_path):
    """Found by the stress run: ``0:.html`` looked like a URL with scheme
    ``0``, got no media type, then a charset, and /content answered 500."""
    from pneuma.testing import serve

    async with serve("doc", tmp_path / "ws", backend="none", watch=False) as server:
        (tmp_path / "ws" / "0:.html").write_text("<p>hi</p>", encoding="utf-8")
        async with server.session.get(f"{server.url}/content/0:.html", headers=server.auth) as r:
            assert r.status == 200
            assert r.headers["Content-Type"] == "text/html; charset=utf-8"
            assert await r.text() == "<p>hi</p>"
