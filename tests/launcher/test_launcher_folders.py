"""Which folders the launcher serves or makes workspaces of (issue 23,
item 5), through a real launcher (tests/launcher/conftest.py): "open"
serves only an existing workspace, a folder with the person's files is
made one only with their confirmation of the listed writes, system
folders and other users' folders are refused, and a path no file can
have is a 4xx — each with nothing written where it was refused."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SYSTEM_FOLDERS = ["/etc", "/usr", "/var", "/boot", "/proc/self", "/sys", "/usr/share"]


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every entry under ``folder`` with its size and mtime: a canary."""
    seen = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            st_ = os.lstat(os.path.join(root, name))
            seen[os.path.relpath(os.path.join(root, name), folder)] = (st_.st_size,
                                                                       st_.st_mtime_ns)
    return seen


def persons_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "CLAUDE.md").write_text("My own notes for the agent.\n")
    (folder / ".gitignore").write_text("build/\n")
    (folder / "chapter1.md").write_text("# Chapter 1\n")
    return folder


async def test_open_serves_only_an_existing_workspace(launcher, tmp_path) -> None:
    folder = persons_folder(tmp_path)
    before = listing(folder)
    status, body = await launcher.call("POST", "/api/workspaces/open",
                                       json={"path": str(folder), "mode": "doc"})
    assert (status, body["error"]["code"], body["error"]["details"]["reason"]) == (
        400, "E_BAD_ARGS", "not_a_workspace"), body
    assert listing(folder) == before  # not a byte of the person's folder changed
    assert launcher.state.hosting.sessions() == []


async def test_a_folder_with_files_becomes_a_workspace_only_once_confirmed(
        launcher, tmp_path) -> None:
    folder = persons_folder(tmp_path)
    before = listing(folder)
    ask = {"mode": "doc", "path": str(folder)}
    status, body = await launcher.call("POST", "/api/workspaces/new", json=ask)
    assert (status, body["error"]["code"]) == (409, "E_CONFLICT"), body
    details = body["error"]["details"]
    assert details["reason"] == "needs_confirmation" and "not empty" in body["error"]["message"]
    writes = {w["path"]: w["action"] for w in details["writes"]}
    assert writes["CLAUDE.md"] == "change" and writes[".gitignore"] == "change"
    assert writes[".pneuma/"] == "create"
    assert any(p.startswith(".claude/skills/") and a == "create" for p, a in writes.items())
    assert listing(folder) == before  # asking wrote nothing

    # A wrong or stale confirmation is asked again; so is one for a folder that changed.
    status, again = await launcher.call("POST", "/api/workspaces/new",
                                        json={**ask, "confirm": "yes"})
    assert (status, again["error"]["details"]["reason"]) == (409, "needs_confirmation")
    (folder / ".mcp.json").write_text('{"mcpServers": {}}')
    status, changed = await launcher.call("POST", "/api/workspaces/new",
                                          json={**ask, "confirm": details["confirm"]})
    assert (status, changed["error"]["details"]["reason"]) == (409, "needs_confirmation")
    assert changed["error"]["details"]["confirm"] != details["confirm"]
    assert not (folder / ".pneuma").exists()

    status, opened = await launcher.call(
        "POST", "/api/workspaces/new",
        json={**ask, "confirm": changed["error"]["details"]["confirm"]})
    assert status == 200, opened
    assert (folder / "CLAUDE.md").read_text().startswith("My own notes for the agent.\n")
    assert (folder / "chapter1.md").read_text() == "# Chapter 1\n"
    assert (folder / ".pneuma").is_dir()
    # Now it is a workspace: open serves it without asking anything.
    status, reopened = await launcher.call("POST", "/api/workspaces/open",
                                           json={"path": str(folder)})
    assert (status, reopened["url"]) == (200, opened["url"])


async def test_system_folders_are_never_made_workspaces(launcher, tmp_path) -> None:
    link = tmp_path / "looks-harmless"
    link.symlink_to("/etc")
    before = listing(Path("/etc"))
    for path in [*SYSTEM_FOLDERS, str(link)]:
        status, body = await launcher.call("POST", "/api/workspaces/new",
                                           json={"mode": "doc", "path": path})
        assert (status, body["error"]["code"], body["error"]["details"]["reason"]) == (
            403, "E_DENY_PATH", "system_folder"), (path, body)
        assert "system folder" in body["error"]["message"] or "shared" in body["error"]["message"]
    assert listing(Path("/etc")) == before
    assert launcher.state.hosting.sessions() == []


async def test_open_with_a_mode_never_seeds_a_system_folder(launcher, tmp_path) -> None:
    link = tmp_path / "etc-link"
    link.symlink_to("/etc")
    before = listing(Path("/etc"))
    for path in ["/etc", "/usr", str(link), "/var/tmp", "/tmp", "/opt"]:
        status, body = await launcher.call("POST", "/api/workspaces/open",
                                           json={"path": path, "mode": "doc"})
        assert status in (400, 403, 404), (path, body)
        assert body["error"]["details"]["reason"] in (
            "system_folder", "missing", "special_folder"), (path, body)
    root_link = tmp_path / "root-link"
    root_link.symlink_to("/")
    for path in ["/usr/share/pneuma-never-made", "/var/lib/pneuma-never-made",
                 "/pneuma-never-made", f"{root_link}/pneuma-never-made",
                 "/home/pneuma-never-made"]:
        status, body = await launcher.call("POST", "/api/workspaces/new",
                                           json={"path": path, "mode": "doc"})
        assert (status, body["error"]["details"]["reason"]) == (403, "system_folder"), body
        assert not Path(path).exists()
    assert listing(Path("/etc")) == before


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
async def test_another_users_folder_is_refused(launcher, tmp_path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.md").write_text("theirs\n")
    os.chown(theirs, 4242, 4242)
    before = listing(theirs)
    asks = [("/api/workspaces/open", {"path": str(theirs), "mode": "doc"}),
            ("/api/workspaces/new", {"path": str(theirs), "mode": "doc"}),
            ("/api/workspaces/new", {"path": str(theirs / "inside"), "mode": "doc"})]
    for route, ask in asks:
        status, body = await launcher.call("POST", route, json=ask)
        assert (status, body["error"]["code"], body["error"]["details"]["reason"]) == (
            403, "E_DENY_PATH", "not_owned"), (route, ask, body)
        assert "uid 4242" in body["error"]["message"]
    assert listing(theirs) == before


HOSTILE_PATHS = ["/tmp/a\x00b", "\x00", "/tmp/\ud800", "~/\udcff", "/" + "a" * 256,
                 "/" + "/".join(["abcdefgh"] * 600), "~nobody-by-that-name/x"]


async def test_paths_no_file_can_have_are_4xx(launcher, tmp_path) -> None:
    routes = ["/api/workspaces/open", "/api/workspaces/new", "/api/sessions/stop",
              "/api/workspaces/forget"]
    for route in routes:
        for path in HOSTILE_PATHS:
            body = json.dumps({"path": path, "mode": "doc"})  # \ud800 travels as JSON escapes
            status, answer = await launcher.call(
                "POST", route, data=body, headers={"Content-Type": "application/json"})
            assert 400 <= status < 500, (route, path, answer)
            assert answer["error"]["code"].startswith("E_"), answer


async def test_static_paths_no_file_can_have_are_404(launcher) -> None:
    for path in ["/static/a%00b", "/static/" + "a" * 300, "/static/x/" + "b/" * 2100]:
        async with launcher.http.get(launcher.url + path, headers=launcher.auth) as answer:
            body = await answer.json()
            assert (answer.status, body["error"]["code"]) == (404, "E_NOT_FOUND"), path


def _post(url: str, token: str, route: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url + route, data=json.dumps(body).encode("ascii"), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


# Text with what breaks paths mixed in: NUL, lone surrogates, long runs.
_path_text = st.lists(st.one_of(
    st.characters(categories=["Cs"]), st.sampled_from(["\x00", "/", "~", ".", "a" * 300]),
    st.characters()), max_size=40).map("".join)


async def test_fuzzed_paths_are_never_a_500(launcher, tmp_path) -> None:
    """Any text as the path of open, stop and forget, and under a scratch
    folder (so nothing is made elsewhere) as the path of new."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    @settings(max_examples=150, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(text=_path_text)
    def fuzz(text: str) -> None:
        for route, path in [("/api/workspaces/open", text), ("/api/sessions/stop", text),
                            ("/api/workspaces/forget", text),
                            ("/api/workspaces/new", f"{scratch}/\x00{text}"),
                            ("/api/workspaces/new", f"{scratch}/{text}\ud800")]:
            status, answer = _post(launcher.url, launcher.token, route,
                                   {"path": path, "mode": "doc"})
            assert status < 500, (route, path, answer)
            if status >= 400:
                assert answer["error"]["code"].startswith("E_"), answer

    await asyncio.get_running_loop().run_in_executor(None, fuzz)
    assert list(scratch.iterdir()) == []
    assert launcher.state.hosting.sessions() == []
