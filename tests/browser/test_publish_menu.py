"""The Export menu's "Publish": the person's targets (their publish.toml,
never the workspace) are listed, and one click puts the webcraft site on a
branch of a git remote (a bare repository on disk), saying the commit and
where it can be seen; a second click says nothing changed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.publish.conftest import AUTHOR, EMAIL, branch_commits, branch_files

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                reason="needs Debian's chromium")


def test_publishing_the_site_from_the_export_menu(pneuma_server, open_page, tmp_path: Path):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    config = tmp_path / "config"
    (config / "pneuma").mkdir(parents=True)
    (config / "pneuma" / "publish.toml").write_text(
        f'[targets.pages]\nkind = "git"\nremote = "{remote}"\n'
        'url = "https://{user}.example.org/{repo}/"\n')
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f"[user]\n\tname = {AUTHOR}\n\temail = {EMAIL}\n")
    server = pneuma_server("webcraft", backend="none", env={
        "XDG_CONFIG_HOME": str(config), "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1"})
    page = open_page(server)
    page.click(".export-btn")
    entry = page.wait_for_selector('.export-menu [data-publish="pages"]')
    assert "pages" in entry.inner_text()
    entry.click()
    note = page.wait_for_selector(".publish-note.ok", timeout=60_000)
    [commit] = branch_commits(remote, "gh-pages")
    assert f"Published to pages as commit {commit[:12]}" in note.inner_text()
    link = page.get_attribute(".publish-note a", "href")
    assert link == f"https://{tmp_path.name}.example.org/remote/"
    files = branch_files(remote, "gh-pages", tmp_path / "clone")
    assert files["index.html"] == (server.workspace / "index.html").read_text()
    page.click('.export-menu [data-publish="pages"]')
    page.wait_for_function("document.querySelector('.publish-note.ok')"
                           "?.textContent.includes('Nothing changed')", timeout=60_000)
    assert branch_commits(remote, "gh-pages") == [commit]
    assert page.console_errors == []
