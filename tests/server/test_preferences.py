"""The person's preferences file ($XDG_CONFIG_HOME/pneuma/preferences.json)
and its route, /api/preferences (issue 25, item 6).

Every test points XDG_CONFIG_HOME (and HOME) at its own tmp_path: nothing
touches the real one.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from pneuma.core.user_files import config_home
from pneuma.server.preferences import (
    MAX_DRAFT_CHARS,
    MAX_DRAFTS,
    MAX_FILE_BYTES,
    PreferenceStore,
    UnusablePreferences,
    check_change,
)


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "pneuma"


def store_with_warnings(home: Path) -> tuple[PreferenceStore, list[str]]:
    warnings: list[str] = []
    return PreferenceStore(home, warn=warnings.append), warnings


def test_the_file_lives_in_the_persons_config_folder(tmp_path: Path) -> None:
    assert config_home({"XDG_CONFIG_HOME": str(tmp_path / "x"), "HOME": "/h"}) == tmp_path / "x" / "pneuma"
    assert config_home({"HOME": str(tmp_path)}) == tmp_path / ".config" / "pneuma"
    # A relative XDG_CONFIG_HOME is ignored (XDG Base Directory rules).
    assert config_home({"XDG_CONFIG_HOME": "rel", "HOME": str(tmp_path)}) == tmp_path / ".config" / "pneuma"


def test_choices_are_kept_for_the_person_and_drafts_per_workspace(config_dir: Path) -> None:
    store = PreferenceStore()
    assert store.path == config_dir / "preferences.json"
    assert store.read().view("/a") == {"locale": None, "chatWidth": None, "chatHidden": {}, "draft": ""}
    store.change(check_change({"locale": "zh-CN", "chatWidth": 512.4}), None)
    store.change(check_change({"chatHidden": {"editor": True}, "draft": "half a thought"}), "/ws/a")
    store.change(check_change({"draft": "another"}), "/ws/b")
    again = PreferenceStore()  # another server, another port: the same file
    assert again.read().view("/ws/a") == {"locale": "zh-CN", "chatWidth": 512,
                                          "chatHidden": {"editor": True}, "draft": "half a thought"}
    assert again.read().view("/ws/b")["draft"] == "another"
    assert again.read().view(None)["draft"] == ""
    assert oct(store.path.stat().st_mode & 0o777) == "0o600"
    # An empty draft forgets it; the oldest drafts go beyond MAX_DRAFTS.
    store.change(check_change({"draft": ""}), "/ws/a")
    assert "/ws/a" not in json.loads(store.path.read_text()).get("drafts", {})
    for n in range(MAX_DRAFTS + 3):
        store.change(check_change({"draft": f"d{n}"}), f"/ws/{n}", now=1000.0 + n)
    drafts = json.loads(store.path.read_text())["drafts"]
    assert len(drafts) == MAX_DRAFTS and f"/ws/{MAX_DRAFTS + 2}" in drafts and "/ws/0" not in drafts


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe", b"[" * 100_000])
def test_a_damaged_file_gives_the_defaults_with_one_warning(config_dir: Path, content: bytes) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "preferences.json").write_bytes(content)
    store, warnings = store_with_warnings(config_dir)
    assert store.read().locale is None
    assert store.read().chat_width is None
    assert len(warnings) == 1 and "damaged" in warnings[0] and str(store.path) in warnings[0]
    # The next change sets the damaged file aside (never lost) and starts anew.
    store.change(check_change({"locale": "en"}), None)
    assert (config_dir / "preferences.json.damaged").read_bytes() == content
    assert store.read().locale == "en"


def test_an_oversized_file_is_not_read_whole(config_dir: Path) -> None:
    config_dir.mkdir(parents=True)
    padding = " " * MAX_FILE_BYTES
    (config_dir / "preferences.json").write_text('{"locale": "zh-CN"}' + padding)
    store, warnings = store_with_warnings(config_dir)
    assert store.read().locale is None
    assert len(warnings) == 1 and "over" in warnings[0]


def test_fields_of_the_wrong_shape_are_left_at_their_defaults(config_dir: Path) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "preferences.json").write_text(json.dumps({
        "locale": "fr", "chatWidth": "wide", "chatHidden": {"editor": "yes"},
        "drafts": {"relative": {"text": "x", "at": 1}, "/ok": {"text": "kept", "at": 2},
                   "/bad": {"text": 3, "at": 1}}}))
    store, warnings = store_with_warnings(config_dir)
    assert store.read().view("/ok") == {"locale": None, "chatWidth": None, "chatHidden": {}, "draft": "kept"}
    assert warnings == []


def test_a_link_planted_at_the_file_is_never_followed(config_dir: Path, tmp_path: Path) -> None:
    config_dir.mkdir(parents=True)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"locale": "zh-CN"}')
    (config_dir / "preferences.json").symlink_to(target)
    store, warnings = store_with_warnings(config_dir)
    assert store.read().locale is None, "the link's target was read"
    assert len(warnings) == 1 and "symbolic link" in warnings[0]
    with pytest.raises(UnusablePreferences, match="symbolic link"):
        store.change(check_change({"locale": "en"}), None)
    assert target.read_text() == '{"locale": "zh-CN"}'
    assert (config_dir / "preferences.json").is_symlink()


def test_a_fifo_at_the_file_does_not_hang(config_dir: Path) -> None:
    config_dir.mkdir(parents=True)
    os.mkfifo(config_dir / "preferences.json")
    store, warnings = store_with_warnings(config_dir)
    done = threading.Event()

    def read() -> None:
        store.read()
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(5), "reading waited on the FIFO"
    assert warnings and "FIFO" in warnings[0]


async def test_the_route_needs_the_token_and_checks_what_it_is_given(
        config_dir: Path, make_server) -> None:
    server = await make_server(backend="none")
    refused = await server.client.get("/api/preferences")
    assert refused.status == 401
    response = await server.get("/api/preferences")
    assert response.status == 200
    assert await response.json() == {"locale": None, "chatWidth": None, "chatHidden": {}, "draft": ""}

    changed = await server.post("/api/preferences", json={"locale": "zh-CN", "draft": "unsent words"})
    assert changed.status == 200
    assert (await changed.json())["draft"] == "unsent words"
    stored = json.loads((config_dir / "preferences.json").read_text())
    assert stored["locale"] == "zh-CN"
    assert stored["drafts"][os.path.realpath(server.workspace)]["text"] == "unsent words"

    for body, code, field in ((
            {"locale": "klingon"}, "E_BAD_ARGS", "locale"),
            ({"colour": "red"}, "E_BAD_ARGS", "colour"),
            ({"chatWidth": 10}, "E_BAD_ARGS", "chatWidth"),
            ({"chatHidden": {"editor": 1}}, "E_BAD_ARGS", "chatHidden"),
            ({"draft": "x" * (MAX_DRAFT_CHARS + 1)}, "E_TOO_LARGE", "draft")):
        bad = await server.post("/api/preferences", json=body)
        error = (await bad.json())["error"]
        assert (bad.status, error["code"], error["details"].get("field")) == (
            400 if code == "E_BAD_ARGS" else 413, code, field), body
    not_json = await server.post("/api/preferences", data=b"{", headers={"Content-Type": "application/json"})
    assert not_json.status == 400 and (await not_json.json())["error"]["code"] == "E_BAD_ARGS"
    huge = await server.post("/api/preferences", data=b" " * (300 * 1024))
    assert huge.status == 413
    assert json.loads((config_dir / "preferences.json").read_text())["locale"] == "zh-CN"


async def test_a_link_at_the_file_is_a_conflict_not_a_500(config_dir: Path, tmp_path: Path,
                                                          make_server) -> None:
    config_dir.mkdir(parents=True)
    target = tmp_path / "dotfiles-prefs.json"
    target.write_text("{}")
    (config_dir / "preferences.json").symlink_to(target)
    server = await make_server(backend="none")
    response = await server.post("/api/preferences", json={"locale": "en"})
    error = (await response.json())["error"]
    assert response.status == 409 and error["code"] == "E_CONFLICT"
    assert "symbolic link" in error["message"]
    assert target.read_text() == "{}"
