"""The Export menu's "Publish" over HTTP: the page names one of the person's
targets and the served workspace's site lands there; the page can never
say where (a remote, a folder) — only the person's publish.toml does."""

from __future__ import annotations

from pathlib import Path

from pneuma.share.model import read_share_file
from pneuma.testing.server import serve
from tests.publish.conftest import branch_commits, branch_files


def _targets(home: Path, text: str) -> None:
    folder = home / ".config" / "pneuma"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "publish.toml").write_text(text)


async def test_the_menu_lists_the_targets_and_publishes_the_site_to_one(tmp_path, git_home,
                                                                        bare_remote):
    _targets(git_home, f'[targets.pages]\nkind = "git"\nremote = "{bare_remote}"\n'
                       'url = "https://{user}.example.org/{repo}/"\n'
                       f'[targets.www]\nkind = "folder"\npath = "{tmp_path / "www"}"\n')
    async with serve("webcraft", tmp_path / "site") as server:
        listed = await (await server.get("/api/publish")).json()
        assert [(t["name"], t["kind"]) for t in listed["targets"]] == [("pages", "git"),
                                                                        ("www", "folder")]
        assert listed["site"] == "zip" and "problem" not in listed
        assert str(bare_remote) not in str(listed)  # where a target points stays on the server
        response = await server.post("/api/publish/pages", json={"message": "From the menu"})
        assert response.status == 200, await response.text()
        done = await response.json()
        assert done["changed"] and done["url"] == f"https://{tmp_path.name}.example.org/remote/"
        files = branch_files(bare_remote, "gh-pages", tmp_path / "clone")
        assert files["index.html"] == (server.workspace / "index.html").read_text()
        again = await (await server.post("/api/publish/pages")).json()
        assert not again["changed"] and again["commit"] == done["commit"]
        assert branch_commits(bare_remote, "gh-pages") == [done["commit"]]


async def test_an_unknown_target_or_a_failing_one_is_a_coded_error(tmp_path, git_home):
    _targets(git_home, '[targets.gone]\nkind = "git"\nremote = "/nonexistent/remote.git"\n')
    async with serve("webcraft", tmp_path / "site") as server:
        missing = await server.post("/api/publish/nope")
        assert missing.status == 404
        assert (await missing.json())["error"]["code"] == "E_NOT_FOUND"
        failing = await server.post("/api/publish/gone")
        error = (await failing.json())["error"]
        assert failing.status == 503 and error["code"] == "E_UNAVAILABLE"
        assert "unreachable" in error["message"] and str(server.workspace) not in error["message"]


async def test_a_broken_targets_file_is_said_in_the_listing(tmp_path, git_home):
    _targets(git_home, "[targets.pages\nkind = ")
    async with serve("webcraft", tmp_path / "site") as server:
        listed = await (await server.get("/api/publish")).json()
        assert listed["targets"] == [] and listed["problem"]["code"] == "E_BAD_ARGS"
        assert "publish.toml" in listed["problem"]["message"]


async def test_a_mode_without_a_site_publishes_the_shared_file(tmp_path, git_home):
    out = tmp_path / "www"
    _targets(git_home, f'[targets.www]\nkind = "folder"\npath = "{out}"\n')
    async with serve("doc", tmp_path / "docs") as server:
        listed = await (await server.get("/api/publish")).json()
        assert listed["site"] is None
        response = await server.post("/api/publish/www", json={"what": "share"})
        assert response.status == 200, await response.text()
        assert (await response.json())["changed"]
        page = (out / "index.html").read_text()
        assert read_share_file(out / "index.html").mode == "doc"
        assert server.token not in page
        wrong = await server.post("/api/publish/www", json={"what": "elsewhere"})
        assert (await wrong.json())["error"]["code"] == "E_BAD_ARGS"
