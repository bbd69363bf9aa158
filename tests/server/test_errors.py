"""One error shape on every route (docs/errors.md): each failure the server
answers is ``{"error": {code, message, details, recoverable, hint?}}`` with
the status its ``E_*`` code implies, whether a route raised a ``ToolError``,
aiohttp refused the request (no route, wrong method, body too large, a plain
request to a socket) or a handler failed unexpectedly. Pages, static files,
redirects and sockets are left as they are."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest
from aiohttp import web

from pneuma.core.errors import ERROR_CODES, HTTP_STATUS

MAX_BODY = 64 * 1024 * 1024  # create_app's client_max_size


async def error_of(response, status: int, code: str) -> dict:
    """The error a response carries, after checking the shape every error has."""
    assert response.status == status, (response.status, await response.text())
    assert response.content_type == "application/json"
    body = await response.json()
    error = body["error"]
    # Viewer actions and scaffolds also say it the way an action answers.
    assert set(body) - {"error"} <= {"success", "message"}, body
    if "success" in body:
        assert body["success"] is False and body["message"] == error["message"]
    assert error["code"] == code, error
    assert HTTP_STATUS[error["code"]] == status
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], dict)
    assert isinstance(error["recoverable"], bool)
    assert set(error) <= {"code", "message", "details", "recoverable", "hint"}
    return error


def stub_handler(server, path: str, monkeypatch, handler) -> None:
    """Make the route answering GET ``path`` run ``handler`` instead."""
    for resource in server.app.router.resources():
        if resource.canonical == path:
            for route in resource:
                monkeypatch.setattr(route, "_handler", handler)
            return
    raise AssertionError(f"no route {path}")


@pytest.mark.parametrize("method,path,kwargs,status,code", [
    ("POST", "/api/files", {"data": "{not json", "headers": {"Content-Type":
                                                            "application/json"}},
     400, "E_BAD_ARGS"),
    ("GET", "/api/files/read", {}, 400, "E_BAD_ARGS"),
    ("GET", "/api/files/read", {"params": {"path": "slides/none.html"}}, 404, "E_NOT_FOUND"),
    ("GET", "/api/files/read", {"params": {"path": "../outside.txt"}}, 403, "E_DENY_PATH"),
    ("GET", "/content/.git/config", {}, 403, "E_DENY_PATH"),
    ("POST", "/api/tools/no_such_tool", {"json": {}}, 400, "E_UNSUPPORTED"),
    ("POST", "/api/viewer/action", {"json": {"actionId": "self-destruct"}}, 400, "E_BAD_ARGS"),
    ("POST", "/api/viewer/action", {"json": {"actionId": "describe-view"}}, 503,
     "E_UNAVAILABLE"),
    ("POST", "/api/confirmations", {"json": {"kind": "question", "summary": "ok?"}}, 503,
     "E_UNAVAILABLE"),
    ("GET", "/api/confirmations/cw_gone", {}, 404, "E_NOT_FOUND"),
    ("GET", "/static/no-such-file.js", {}, 404, "E_NOT_FOUND"),
    ("GET", "/modes/draw/viewer.js", {}, 404, "E_NOT_FOUND"),
    ("GET", "/ws/browser/not-this-session", {}, 404, "E_NOT_FOUND"),
    ("GET", "/api/export/docx", {}, 400, "E_BAD_ARGS"),
    ("POST", "/api/edits", {"json": {"path": "theme.css", "content": "x"}}, 400, "E_BAD_ARGS"),
    ("POST", "/api/edits", {"json": {"path": "theme.css", "content": "x", "base_sha256": "0" * 64}},
     409, "E_CONFLICT"),
])
async def test_each_route_family_answers_in_the_one_shape(server, method, path, kwargs,
                                                          status, code):
    response = await server.request(method, path, **kwargs)
    await error_of(response, status, code)


async def test_a_file_that_is_not_text_or_too_large_to_read(server):
    (server.workspace / "photo.bin").write_bytes(b"\xff\xfe\x00garbage")
    response = await server.get("/api/files/read", params={"path": "photo.bin"})
    error = await error_of(response, 415, "E_ENCODING")
    assert error["details"] == {"path": "photo.bin"}
    with (server.workspace / "huge.txt").open("wb") as big:
        big.truncate(10 * 1024 * 1024 + 1)
    response = await server.get("/api/files/read", params={"path": "huge.txt"})
    error = await error_of(response, 413, "E_TOO_LARGE")
    assert "/content/huge.txt" in error["hint"]


async def test_an_unknown_api_route_is_404_json_with_a_hint(server):
    for method in ("GET", "POST", "DELETE"):
        response = await server.request(method, "/api/no/such/route")
        error = await error_of(response, 404, "E_NOT_FOUND")
        assert error["details"] == {"status": 404, "reason": "no_route"}
        assert f"{method} /api/no/such/route" in error["message"]
        assert "docs/protocol.md" in error["hint"]
    # Outside /api/ too: never aiohttp's text page.
    response = await server.get("/favicon.ico")
    error = await error_of(response, 404, "E_NOT_FOUND")
    assert error["details"]["reason"] == "no_route"


async def test_an_unknown_route_without_the_token_is_still_401(server):
    server.client.session.cookie_jar.clear()
    response = await server.client.get("/api/no/such/route")
    await error_of(response, 401, "E_UNAUTHORIZED")


async def test_a_wrong_method_says_which_methods_the_route_takes(server):
    response = await server.request("PUT", "/api/files")
    error = await error_of(response, 400, "E_UNSUPPORTED")
    assert error["recoverable"] is True
    assert error["details"] == {"status": 405, "reason": "method_not_allowed",
                                "method": "PUT", "allowed": ["DELETE", "GET", "HEAD", "POST"]}
    assert response.headers["Allow"] == "DELETE,GET,HEAD,POST"


async def test_a_body_over_the_size_limit_is_413_json(server):
    response = await server.post("/api/files", data=b"x" * (MAX_BODY + 1),
                                 headers={"Content-Type": "application/json"})
    error = await error_of(response, 413, "E_TOO_LARGE")
    assert str(MAX_BODY) in error["message"]


async def test_a_plain_request_to_a_socket_route_says_it_is_a_websocket(server):
    response = await server.get(server.ws_path())
    error = await error_of(response, 400, "E_BAD_ARGS")
    assert error["details"]["reason"] == "websocket_only"
    assert "WebSocket" in error["hint"]


async def test_an_unexpected_exception_is_500_json_without_the_workspace_path(
        server, monkeypatch, caplog):
    workspace = server.workspace

    async def broken(request: web.Request) -> web.Response:
        raise RuntimeError(f"cannot parse {workspace}/slides/01-title.html: "
                           f"see /home/someone/.cache/x.log")

    stub_handler(server, "/api/session", monkeypatch, broken)
    with caplog.at_level(logging.ERROR, logger="pneuma.server.errors"):
        response = await server.get("/api/session")
        error = await error_of(response, 500, "E_INTERNAL")
    text = await response.text()
    assert str(workspace) not in text and str(workspace.resolve()) not in text
    assert "/home/someone" not in text
    assert error["recoverable"] is False
    assert error["details"] == {"exception": "RuntimeError"}
    assert "GET /api/session" in error["message"]
    assert "slides/01-title.html" in error["message"]  # what failed, said relatively
    assert "pneuma run" in error["hint"]
    # The whole story is in the server's log, traceback and all.
    record = next(r for r in caplog.records if r.name == "pneuma.server.errors")
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError


async def test_a_handler_timing_out_is_504_json(server, monkeypatch):
    async def stuck(request: web.Request) -> web.Response:
        raise TimeoutError()

    stub_handler(server, "/api/config", monkeypatch, stuck)
    response = await server.get("/api/config")
    await error_of(response, 504, "E_TIMEOUT")


async def test_redirects_pages_and_static_files_are_left_alone(server, monkeypatch):
    response = await server.get("/")
    assert response.status == 200 and response.content_type == "text/html"
    response = await server.get("/content/manifest.json")
    assert response.status == 200 and "slides" in await response.text()

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/elsewhere")

    stub_handler(server, "/api/session", monkeypatch, moved)
    response = await server.get("/api/session", allow_redirects=False)
    assert response.status == 302 and response.headers["Location"] == "/elsewhere"


async def test_an_error_a_handler_composed_as_json_is_passed_through(server, monkeypatch):
    async def own(request: web.Request) -> web.Response:
        raise web.HTTPConflict(text='{"error": {"code": "E_CONFLICT", "message": "mine"}}',
                               content_type="application/json")

    stub_handler(server, "/api/session", monkeypatch, own)
    response = await server.get("/api/session")
    assert response.status == 409
    assert await response.json() == {"error": {"code": "E_CONFLICT", "message": "mine"}}


async def test_an_aiohttp_error_with_its_own_text_keeps_it_as_the_message(server, monkeypatch):
    async def refuses(request: web.Request) -> web.Response:
        raise web.HTTPBadRequest(text="the body is not JSON: oops")

    stub_handler(server, "/api/session", monkeypatch, refuses)
    error = await error_of(await server.get("/api/session"), 400, "E_BAD_ARGS")
    assert error["message"] == "the body is not JSON: oops"


def test_every_code_has_a_status():
    assert set(HTTP_STATUS) == set(ERROR_CODES)
    assert {HTTP_STATUS[c] for c in ("E_UNAUTHORIZED", "E_FORBIDDEN", "E_UNAVAILABLE")} == \
        {401, 403, 503}


# --- the Export menu's route (/api/export/{format}) ---------------------------------


async def test_a_deck_that_cannot_be_exported_is_a_conflict(server):
    (server.workspace / "manifest.json").write_text('{"slides": []}')
    response = await server.get("/api/export/html")
    error = await error_of(response, 409, "E_CONFLICT")
    assert "no slides" in error["message"]
    assert "manifest.json" in error["hint"]
    assert str(server.workspace) not in error["message"]
    (server.workspace / "manifest.json").unlink()
    response = await server.get("/api/export/html")
    error = await error_of(response, 409, "E_CONFLICT")
    assert str(server.workspace) not in error["message"]


@pytest.fixture
def no_chromium(monkeypatch, tmp_path):
    """No Chromium anywhere: the pinned path is missing and PATH has none."""
    import pneuma.tools.html_render

    monkeypatch.setattr(pneuma.tools.html_render, "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))


async def test_pdf_export_without_chromium_is_unavailable(server, no_chromium):
    response = await server.get("/api/export/pdf")
    error = await error_of(response, 503, "E_UNAVAILABLE")
    assert "needs Chromium" in error["message"] and "apt-get install chromium" in error["message"]
    assert "HTML" in error["hint"]
    # The HTML export needs no Chromium and still works.
    response = await server.get("/api/export/html")
    assert response.status == 200 and "<html" in await response.text()


async def test_pdf_export_with_a_chromium_that_crashes_is_a_preview_failure(
        server, monkeypatch, tmp_path):
    import pneuma.tools.html_render

    crashing = tmp_path / "chromium"
    crashing.write_text("#!/bin/sh\necho 'chromium: Trace/breakpoint trap' >&2\nexit 133\n")
    crashing.chmod(crashing.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(pneuma.tools.html_render, "CHROMIUM", str(crashing))
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    response = await server.get("/api/export/pdf")
    error = await error_of(response, 502, "E_PREVIEW_FAIL")
    assert "Chromium failed" in error["message"] and "Trace/breakpoint trap" in error["message"]
    assert error["recoverable"] is True
    assert not list(Path(server.workspace, "exports").glob("*.pdf"))
