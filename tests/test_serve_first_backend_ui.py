"""The early server (pneuma.server.early_server) answers ``/api/config`` with
the backend's browser module exactly as the real server does, so a page that
loads on a warm start still gets the backend's own UI (the native backend's
browser picker); a launch stamp written before backends had browser modules
gives no early answers rather than a wrong one."""

from __future__ import annotations

import json

from pneuma.agents.native import page_module
from pneuma.server.early_server import FirstAnswers
from tests.pneuma_process import PNEUMA, _started, no_server_left  # noqa: F401 (autouse)
from tests.test_serve_first import _gated_env, _get, _ready, _run, _stop


def test_a_warm_start_names_the_backends_browser_module_before_the_server_is_built(tmp_path):
    env, gate = _gated_env(tmp_path)
    workspace = tmp_path / "deck"
    gate.touch()
    first = _run(workspace, env, backend="native")
    _ready(first)
    _stop(first)
    gate.unlink()

    proc = _run(workspace, env, backend="native")
    base, token, _ = _ready(proc)
    status, _, body = _get(f"{base}/api/config?token={token}")  # the gate is shut: the early server
    assert status == 200
    early = json.loads(body)
    assert early["backendModule"] == page_module.URL
    gate.touch()  # the real server comes up; it says the same and serves the module
    status, _, body = _get(f"{base}/api/config?token={token}", timeout=30)
    assert status == 200 and json.loads(body) == early
    status, headers, script = _get(f"{base}{page_module.URL}?token={token}", timeout=30)
    assert status == 200 and script == page_module.FILE.read_bytes()
    assert headers["Content-Type"].startswith("text/javascript")
    _stop(proc)


def test_a_stamp_from_before_browser_modules_gives_no_early_answers():
    old = {"mode": {"name": "slide"}, "params": {}, "staticDir": "/s"}
    assert FirstAnswers.from_json(old) is None
    for module in (None, "/backends/x/ui.js"):
        answers = FirstAnswers.from_json({**old, "backendModule": module})
        assert answers is not None and answers.backend_module == module
    assert FirstAnswers.from_json({**old, "backendModule": 7}) is None
