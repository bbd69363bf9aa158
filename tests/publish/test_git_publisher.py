"""The git publisher: a folder becomes one commit on a branch of a remote
(here a bare repository on disk), with git's own author; no change, no
commit; a failure is one line with no credential in it."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from pneuma.api import PublishError, PublishRequest
from pneuma.publish.git_branch import fill_url, publish_to_git
from tests.publish.conftest import AUTHOR, branch_commits, branch_files, git


def _site(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _target(remote: Path, **more: object) -> dict[str, object]:
    return {"name": "site", "kind": "git", "remote": str(remote), **more}


def test_a_missing_branch_starts_as_an_orphan_holding_exactly_the_folder(tmp_path, bare_remote):
    site = _site(tmp_path / "site", {"index.html": "<h1>Hi</h1>", "css/a.css": "h1{}"})
    result = publish_to_git(PublishRequest(site, _target(bare_remote), "Publish the site"))
    assert result.changed
    assert branch_files(bare_remote, "gh-pages", tmp_path / "clone") == {
        "index.html": "<h1>Hi</h1>", "css/a.css": "h1{}"}
    assert branch_commits(bare_remote, "gh-pages") == [result.commit]
    assert result.commit and result.commit[:12] in result.summary
    log = git("--git-dir", str(bare_remote), "log", "-1", "--format=%an|%s", "gh-pages")
    assert log == f"{AUTHOR}|Publish the site"


def test_publishing_the_same_files_again_makes_no_commit(tmp_path, bare_remote):
    site = _site(tmp_path / "site", {"index.html": "one"})
    first = publish_to_git(PublishRequest(site, _target(bare_remote), "first"))
    again = publish_to_git(PublishRequest(site, _target(bare_remote), "again"))
    assert not again.changed and again.commit == first.commit
    assert "nothing changed" in again.summary
    assert branch_commits(bare_remote, "gh-pages") == [first.commit]


def test_a_file_the_folder_no_longer_has_leaves_the_branch_and_history_is_kept(tmp_path,
                                                                                bare_remote):
    site = _site(tmp_path / "site", {"index.html": "one", "old.html": "old"})
    first = publish_to_git(PublishRequest(site, _target(bare_remote, branch="pages"), "1"))
    (site / "old.html").unlink()
    (site / "index.html").write_text("two")
    second = publish_to_git(PublishRequest(site, _target(bare_remote, branch="pages"), "2"))
    assert second.changed and second.commit != first.commit
    assert branch_files(bare_remote, "pages", tmp_path / "clone") == {"index.html": "two"}
    assert branch_commits(bare_remote, "pages") == [second.commit, first.commit]


def test_other_branches_of_the_remote_are_left_alone(tmp_path, bare_remote):
    work = tmp_path / "work"
    git("init", "-q", str(work))
    (work / "README.md").write_text("source")
    git("add", "README.md", cwd=work)
    git("commit", "-q", "-m", "source", cwd=work)
    git("push", "-q", str(bare_remote), "main", cwd=work)
    main_before = branch_commits(bare_remote, "main")
    site = _site(tmp_path / "site", {"index.html": "site"})
    publish_to_git(PublishRequest(site, _target(bare_remote), "publish"))
    assert branch_commits(bare_remote, "main") == main_before
    assert branch_files(bare_remote, "gh-pages", tmp_path / "clone") == {"index.html": "site"}


def test_an_unreachable_remote_is_one_line_that_shows_no_password(tmp_path, git_home):
    site = _site(tmp_path / "site", {"index.html": "x"})
    target = _target(Path("/nonexistent"))
    target["remote"] = "https://ada:s3cret-token@127.0.0.1:9/ada/site.git"
    with pytest.raises(PublishError) as caught:
        publish_to_git(PublishRequest(site, target, "x"))
    message = str(caught.value)
    assert "unreachable" in message and "\n" not in message
    assert "s3cret-token" not in message and "s3cret-token" not in (caught.value.hint or "")
    assert caught.value.code == "E_UNAVAILABLE"


def test_without_an_author_git_says_how_to_set_one(tmp_path, bare_remote, git_home):
    # no identity, and no guessing one from the machine's names
    (git_home / ".gitconfig").write_text("[user]\n\tuseConfigOnly = true\n")
    site = _site(tmp_path / "site", {"index.html": "x"})
    with pytest.raises(PublishError) as caught:
        publish_to_git(PublishRequest(site, _target(bare_remote, url=""), "x"))
    assert "who you are" in str(caught.value) and "user.email" in (caught.value.hint or "")
    assert branch_commits_or_none(bare_remote) is None


def branch_commits_or_none(remote: Path) -> list[str] | None:
    done = subprocess.run(["git", "--git-dir", str(remote), "rev-list", "gh-pages"],
                          capture_output=True, text=True)
    return done.stdout.split() if done.returncode == 0 else None


def test_a_remote_that_never_answers_stops_at_the_timeout_and_leaves_nothing_running(
        tmp_path, git_home, monkeypatch):
    marker = f"{time.time() % 1000:.4f}"  # names this test's stand-in ssh among the processes
    monkeypatch.setenv("GIT_SSH_COMMAND", f"sleep 300.{marker.replace('.', '')} #")
    site = _site(tmp_path / "site", {"index.html": "x"})
    started = time.monotonic()
    with pytest.raises(PublishError) as caught:
        publish_to_git(PublishRequest(site, {"name": "site", "kind": "git", "timeout": 1,
                                             "remote": "ssh://127.0.0.1/ada/site.git"}, "x"))
    assert caught.value.code == "E_TIMEOUT" and "1 s" in str(caught.value)
    assert time.monotonic() - started < 20
    assert not [p for p in Path("/proc").glob("[0-9]*/cmdline")
                if f"300.{marker.replace('.', '')}".encode() in _read(p)]


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def test_an_ignore_file_in_the_folder_does_not_leave_files_out(tmp_path, bare_remote):
    site = _site(tmp_path / "site", {"index.html": "x", ".gitignore": "*.js\n", "app.js": "1"})
    publish_to_git(PublishRequest(site, _target(bare_remote), "x"))
    assert set(branch_files(bare_remote, "gh-pages", tmp_path / "clone")) == {
        "index.html", ".gitignore", "app.js"}


def test_a_branch_that_could_be_an_option_is_refused(tmp_path, bare_remote):
    site = _site(tmp_path / "site", {"index.html": "x"})
    with pytest.raises(PublishError) as caught:
        publish_to_git(PublishRequest(site, _target(bare_remote, branch="--upload-pack=x"), "x"))
    assert caught.value.code == "E_BAD_ARGS" and "branch" in str(caught.value)


def test_the_url_pattern_is_filled_from_the_remote():
    assert fill_url("https://{user}.github.io/{repo}/", "git@github.com:ada/notes.git",
                    "gh-pages", "abc") == "https://ada.github.io/notes/"
    assert fill_url("https://{user}.codeberg.page/{repo}/@{branch}/",
                    "https://codeberg.org/ada/notes", "pages", None) \
        == "https://ada.codeberg.page/notes/@pages/"
