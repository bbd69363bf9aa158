"""Item 5 under stress: many more hostile but harmless inputs than
tests/server/test_hostile_input.py sends (its helpers and strategies):
any text in any field of the JSON routes, long names on every file route,
bodies nested at any depth past the limit on every POST route. Each answer
is below 500 and, when an error, in the one shape with an ``E_*`` code;
none names the workspace's place on disk."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pneuma.testing import serve
from tests.server.test_hostile_input import (
    _FIELDS,
    _answer,
    _any_text,
    _file_routes,
    _is_client_error,
    _names,
    _post_json,
    _post_routes,
)
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

FIELD_EXAMPLES = 1_500
NAME_EXAMPLES = 300  # three requests each
DEEP_EXAMPLES = 300
# Seconds for each part, so that on a loaded machine the first part cannot
# use up the time of the other two.
TIME_CAPS = {"any_field": 10.0, "long_names": 5.0, "deep_bodies": 5.0}


async def test_hostile_input_is_never_a_500(tmp_path):
    tried = {"fields": 0, "names": 0, "deep": 0, "5xx": 0, "leaks": 0}
    phase = {"started": time.monotonic(), "cap": 0.0}

    def spent() -> bool:
        # Hypothesis has no wall-clock bound: once the part's cap is spent,
        # its remaining examples do nothing (the counts say how far it got).
        return time.monotonic() - phase["started"] > phase["cap"]

    async with serve("doc", tmp_path / "ws", backend="none", watch=False) as server:
        token = server.auth["Authorization"].split(" ", 1)[1]
        post_routes = _post_routes(server.app, server.session_id)
        loop = asyncio.get_running_loop()

        def run(coroutine):
            return asyncio.run_coroutine_threadsafe(coroutine, loop).result(30)

        @settings(max_examples=FIELD_EXAMPLES, deadline=None, derandomize=True)
        @given(route=st.sampled_from(_FIELDS), text=_any_text)
        def any_field(route, text):
            if spent():
                return
            path, field = route
            value: object = [text] if field == "clear" else text
            body = json.dumps({field: value, **({"kind": "write", "details": {
                "path": text, "diff": {"type": "line", "hunks": []}}} if field == "kind" else {})})
            status, answer = _post_json(server.url + path, token, body)
            tried["fields"] += 1
            tried["5xx"] += status >= 500 and status != 503
            assert status < 500 or status == 503, (path, status, answer)
            if status >= 400:
                assert answer.get("error", {}).get("code", "").startswith("E_"), answer

        @settings(max_examples=NAME_EXAMPLES, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow])
        @given(name=_names, nested=st.booleans())
        def long_names(name, nested):
            if spent():
                return
            rel = ("a/b/" if nested else "") + name
            answers = run(_file_routes(server, rel))
            tried["names"] += len(answers)
            for route, (status, code, message) in answers.items():
                tried["5xx"] += status >= 500
                tried["leaks"] += str(tmp_path) in message
                assert status < 500, (route, status, code, message)
                if status >= 400:
                    assert _is_client_error(status, code, message), (route, status, code)
                assert str(tmp_path) not in message

        async def post_raw(path: str, body: str):
            async with server.session.post(server.url + path, data=body, headers={
                    **server.auth, "Content-Type": "application/json"}) as r:
                return await _answer(r)

        @settings(max_examples=DEEP_EXAMPLES, deadline=None, derandomize=True)
        @given(path=st.sampled_from(post_routes), depth=st.integers(1_001, 200_000),
               opener=st.sampled_from(["[", '{"a":', '{"path":[']))
        def deep_bodies(path, depth, opener):
            if spent():
                return
            status, code, message = run(post_raw(path, opener * depth))
            tried["deep"] += 1
            tried["5xx"] += status >= 500
            assert status < 500, (path, depth, status, code)
            if status >= 400:
                assert _is_client_error(status, code, message), (path, status, code)

        try:
            for check in (any_field, long_names, deep_bodies):
                phase.update(started=time.monotonic(), cap=TIME_CAPS[check.__name__])
                await asyncio.to_thread(check)
        finally:
            record("5 hostile input", f"{count(tried['fields'])} field values on "
                   f"{len(_FIELDS)} JSON fields, {count(tried['names'])} long-name file "
                   f"requests, {count(tried['deep'])} deep bodies on {len(post_routes)} POST "
                   f"routes; {tried['5xx']} 5xx answers, {tried['leaks']} paths leaked")
    assert tried["fields"] > 100 and tried["deep"] > 0
