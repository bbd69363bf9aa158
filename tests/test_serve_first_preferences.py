"""A warm start's first paint already speaks the person's language (issue
25, item 6): while the real server is still being built, the early server
answers ``/api/preferences`` from the person's preferences file, exactly
as the real server does once it is up (the import gate of
tests/test_serve_first.py holds the real server back)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.pneuma_process import no_server_left  # noqa: F401 (autouse)
from tests.test_serve_first import (
    _gated_env,
    _get,
    _ready,
    _run,
    _stop,
    _warm_workspace,
)


def test_a_warm_start_answers_the_preferences_before_the_server_is_built(tmp_path: Path) -> None:
    env, gate = _gated_env(tmp_path)
    config = tmp_path / "config"
    env["XDG_CONFIG_HOME"] = str(config)
    workspace = _warm_workspace(tmp_path, env, gate)
    (config / "pneuma").mkdir(parents=True)
    (config / "pneuma" / "preferences.json").write_text(json.dumps({
        "version": 1, "locale": "zh-CN", "chatWidth": 600, "chatHidden": {"editor": True},
        "drafts": {os.path.realpath(workspace): {"text": "还没发出的话", "at": 1.0}}}))
    wanted = {"locale": "zh-CN", "chatWidth": 600, "chatHidden": {"editor": True},
              "draft": "还没发出的话"}

    proc = _run(workspace, env)
    base, token, _ = _ready(proc)
    # The gate is shut: this answer is the early server's.
    status, headers, body = _get(f"{base}/api/preferences?token={token}", timeout=5)
    assert status == 200 and headers["Content-Type"] == "application/json; charset=utf-8"
    assert json.loads(body) == wanted
    gate.touch()  # the real server comes up; it says the same
    status, _, body = _get(f"{base}/api/preferences", timeout=30,
                           headers={"Authorization": f"Bearer {token}"})
    assert status == 200 and json.loads(body) == wanted
    _stop(proc)
