"""The page's on/off switches kept with the person's preferences (issue 26,
items 4 and 5): follow the agent, notifications, their sound
(docs/notifications.md). A switch is absent until the person sets it; only
true, false (and null, to forget it) are accepted.

Every test points XDG_CONFIG_HOME (and HOME) at its own tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pneuma.server.preferences import SWITCHES, PreferenceStore, check_change


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "pneuma"


def test_switches_are_absent_until_set_then_kept_and_forgotten_on_null(config_dir: Path) -> None:
    store = PreferenceStore()
    assert not set(SWITCHES) & set(store.read().view("/ws"))
    store.change(check_change({"followAgent": False, "notifications": True}), None)
    store.change(check_change({"notificationSound": True}), None)
    again = PreferenceStore()  # another server: the same file
    view = again.read().view("/ws")
    assert (view["followAgent"], view["notifications"], view["notificationSound"]) == (False, True, True)
    store.change(check_change({"notifications": None}), None)
    stored = json.loads(store.path.read_text())
    assert "notifications" not in stored and stored["followAgent"] is False


def test_a_switch_of_the_wrong_shape_in_the_file_is_left_at_its_default(config_dir: Path) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "preferences.json").write_text(json.dumps(
        {"followAgent": "no", "notifications": 0, "notificationSound": True}))
    view = PreferenceStore().read().view(None)
    assert "followAgent" not in view and "notifications" not in view
    assert view["notificationSound"] is True


async def test_the_route_refuses_a_switch_that_is_not_true_or_false(config_dir: Path, make_server) -> None:
    server = await make_server(backend="none")
    for name in SWITCHES:
        for bad in ("yes", 1, 0, [], {"on": True}):
            response = await server.post("/api/preferences", json={name: bad})
            error = (await response.json())["error"]
            assert (response.status, error["code"], error["details"]["field"]) == (400, "E_BAD_ARGS", name)
    ok = await server.post("/api/preferences", json={"followAgent": False})
    assert ok.status == 200 and (await ok.json())["followAgent"] is False
    assert (await (await server.get("/api/preferences")).json())["followAgent"] is False
    assert not (config_dir / "preferences.json").read_text().count('"notifications"')
