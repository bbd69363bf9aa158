"""Git as the person has it, but in the test's own folders: its own global
config (an author), no system config, and a HOME of its own, so that no
publish test reads or writes anything of the machine's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

AUTHOR = "Ada Publisher"
EMAIL = "ada@example.invalid"


@pytest.fixture
def git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    config = home / ".gitconfig"
    config.write_text(f"[user]\n\tname = {AUTHOR}\n\temail = {EMAIL}\n"
                      "[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def bare_remote(tmp_path: Path, git_home: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    return remote


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def branch_files(remote: Path, branch: str, into: Path) -> dict[str, str]:
    """A fresh clone of the branch: its files (path → text), .git left out."""
    git("clone", "-q", "--branch", branch, str(remote), str(into))
    return {p.relative_to(into).as_posix(): p.read_text()
            for p in sorted(into.rglob("*")) if p.is_file() and ".git" not in p.parts}


def branch_commits(remote: Path, branch: str) -> list[str]:
    return git("--git-dir", str(remote), "rev-list", branch).split()
