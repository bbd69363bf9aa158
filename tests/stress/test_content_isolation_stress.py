"""Item 2 under stress, at the server: every ``/content`` answer, for many
kinds of file (the hostile page, SVG and slide of
tests/browser/test_content_isolation.py among them), carries the sandbox
policy without ``allow-same-origin`` and ``nosniff``; every route, ``/api``
first, refuses ``Origin: null`` (what a sandboxed document sends) with 403,
whichever way the token comes."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pneuma.server.csp import CONTENT_POLICY
from tests.browser.test_content_isolation import ATTACK, PAGE, SLIDE, SVG
from tests.server.harness import seeded_slide_workspace, server_config, start_app_server
from tests.server.test_auth import all_routes
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

EXTENSIONS = ["html", "htm", "xhtml", "svg", "xml", "md", "txt", "json", "js", "mjs", "css",
              "png", "jpg", "gif", "webp", "pdf", "wasm", "map", "csv", "unknownext", ""]
CONTENT_EXAMPLES = 1_000
ORIGIN_ROUNDS = 40  # each round: every route, three ways of giving the token
TIME_CAP = 10.0  # seconds, per test


def _bodies() -> st.SearchStrategy[bytes]:
    attack = ATTACK.format(target="pwned.txt")
    hostile = [PAGE.format(attack=attack), SVG.format(attack=attack), SLIDE.format(attack=attack)]
    return st.one_of(st.sampled_from([h.encode() for h in hostile]), st.binary(max_size=256))


@pytest.fixture
async def slide_server(pm, aiohttp_client, tmp_path):
    mode, workspace = seeded_slide_workspace(tmp_path)
    return await start_app_server(aiohttp_client, server_config(mode, workspace))


@pytest.fixture
def tried():
    seen = {"files": 0, "kinds": set(), "wrong": 0, "5xx": 0}
    yield seen
    record("2 content isolation", f"{count(seen['files'])} /content answers over "
           f"{len(seen['kinds'])} file kinds, {count(seen['wrong'])} without the sandbox "
           f"policy or nosniff, {seen['5xx']} answered 5xx")


@settings(max_examples=CONTENT_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(stem=st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"),
                                  exclude_characters="/\\%?#"), min_size=1, max_size=20)
       .filter(lambda s: s not in (".", "..") and not s.startswith(".")),
       extension=st.sampled_from(EXTENSIONS), body=_bodies(), nested=st.booleans())
async def test_every_content_answer_is_sandboxed(slide_server, tried, stem, extension, body,
                                                 nested):
    rel = ("deep/er/" if nested else "") + stem + (f".{extension}" if extension else "")
    target = Path(slide_server.config.workspace) / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.write_bytes(body)
    except OSError:
        return  # a name this file system cannot hold (too long in bytes)
    response = await slide_server.get("/content/" + quote(rel))
    await response.read()
    tried["files"] += 1
    tried["kinds"].add(extension)
    policy = response.headers.get("Content-Security-Policy")
    sniff = response.headers.get("X-Content-Type-Options")
    if policy != CONTENT_POLICY or sniff != "nosniff":
        tried["wrong"] += 1
    # Served, or refused with a 4xx (a name such as "A:.html" reads as a
    # Windows drive); never a 5xx ("0:.html" was one).
    tried["5xx"] += response.status >= 500
    assert response.status < 500, (rel, response.status)
    assert policy == CONTENT_POLICY and "allow-same-origin" not in policy, (rel, policy)
    assert sniff == "nosniff", rel


async def test_every_route_refuses_origin_null_however_the_token_comes(slide_server):
    server = slide_server
    routes = all_routes(server)
    token_ways = [{"headers": server.auth},
                  {"params": {"token": server.token}},
                  {"headers": {}}]  # the cookie the client holds
    requests = answered = api_routes = 0
    deadline = time.monotonic() + TIME_CAP
    rounds = 0
    for rounds in range(1, ORIGIN_ROUNDS + 1):
        for method, path in routes:
            api_routes += path.startswith("/api/") and rounds == 1
            for way in token_ways:
                headers = {**way.get("headers", {}), "Origin": "null"}
                response = await server.client.request(method, path, headers=headers,
                                                       params=way.get("params"))
                await response.read()
                requests += 1
                if response.status != 403:
                    answered += 1
                    pytest.fail(f"{method} {path} answered {response.status} to Origin: null")
        if time.monotonic() > deadline:
            break
    record("2 content isolation", f"Origin: null: {rounds} rounds over {len(routes)} routes "
           f"({api_routes} under /api), {count(requests)} requests, {answered} answered")
    assert api_routes > 10
