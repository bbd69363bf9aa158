"""The git publisher: a folder of files as one commit on a branch of any git
remote — the way GitHub Pages, Codeberg Pages and many hosts serve sites.

    [targets.site]
    kind = "git"
    remote = "git@github.com:ada/notes.git"   # any URL or path git can push to
    branch = "gh-pages"                       # default
    url = "https://{user}.github.io/{repo}/"  # optional: where the site is served

The work happens in a private repository in a temporary folder whose work
tree is the folder to publish: the branch's last commit is fetched (only
that one), the index is set to its tree and ``git add -A`` over the folder
makes the branch's files exactly the folder's (a file the folder no longer
has is removed from the branch). No difference: no commit, and the result
says so. A missing branch starts as an orphan. The push never forces: a
branch someone else moved meanwhile is a rejected push, said in one line.

Git runs with no prompt (``GIT_TERMINAL_PROMPT=0``, ssh in batch mode
unless the person set their own ssh command, stdin closed) and a timeout;
the author and the credentials are git's own (the person's git config,
credential helpers and ssh agent): Pneuma neither stores nor prints any —
a password written into the remote's URL is hidden in every message.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from pneuma.host.publishers import (
    Publisher,
    PublishError,
    PublishRequest,
    PublishResult,
)

DEFAULT_BRANCH = "gh-pages"
DEFAULT_TIMEOUT_S = 120.0
# A branch name git accepts and that cannot be read as an option or a range.
_BRANCH = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)[A-Za-z0-9._/-]{1,200}(?<![./])$")
_REPOSITORY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                         "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX",
                         "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES")
# user:password@ in a URL: never shown.
_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)


def hide_credentials(text: str) -> str:
    """``text`` with any ``user:secret@`` of a URL in it left out."""
    return _USERINFO.sub(lambda m: m.group("scheme") + "***@", text)


def fill_url(pattern: str, remote: str, branch: str, commit: str | None) -> str:
    """The target's URL pattern with what the remote says filled in:
    ``{user}`` and ``{repo}`` from its last two path parts
    (``git@github.com:ada/notes.git`` → ``ada``, ``notes``), ``{branch}``
    and ``{commit}``. A placeholder it cannot fill is left as written."""
    parts = [p for p in re.split(r"[/:]", remote.rstrip("/")) if p]
    values = {"branch": branch, "commit": commit or "{commit}"}
    if len(parts) >= 2:
        values["user"] = parts[-2].rsplit("@", 1)[-1]
        values["repo"] = parts[-1].removesuffix(".git")
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), pattern)


def _wait_for_group_gone(group: int, limit_s: float = 2.0) -> None:
    """A killed group's helpers die when they are next scheduled, and git
    has already gone: wait (briefly) until none is left, so that nothing is
    still running when the publish says it stopped."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.02)


class _Git:
    """Git commands in one private repository, no prompts, bounded in time."""

    def __init__(self, git_dir: Path, work_tree: Path, timeout: float) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.timeout = timeout
        # What git inherits from a surrounding repository (pneuma run from a git
        # hook) would point it at that repository instead of this private one.
        env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_VARIABLES}
        env["GIT_TERMINAL_PROMPT"] = "0"  # a missing credential fails instead of waiting
        env["GCM_INTERACTIVE"] = "never"
        if "GIT_SSH_COMMAND" not in env and "GIT_SSH" not in env:
            env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
        self.env = env

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = ["git", f"--git-dir={self.git_dir}", f"--work-tree={self.work_tree}", *args]
        try:
            # A group of its own: on a timeout, git's helpers (ssh, the
            # credential helper, git-remote-https) go with it.
            process = subprocess.Popen(command, env=self.env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, start_new_session=True)
        except FileNotFoundError:
            raise PublishError("git is not installed", code="E_UNAVAILABLE",
                               hint="install git and publish again") from None
        with process:
            try:
                stdout, stderr = process.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
                _wait_for_group_gone(process.pid)
                raise PublishError(f"git {args[0]} did not finish within {self.timeout:g} s",
                                   code="E_TIMEOUT",
                                   hint="check the remote is reachable, or raise the target's "
                                        "timeout") from None
        done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
        if check and done.returncode != 0:
            raise _failure(args[0], done.stderr)
        return done


def _last_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    meaningful = [line for line in lines if line.lower().startswith(("fatal:", "error:", "!"))]
    return hide_credentials((meaningful or lines or ["no message"])[-1])


def _failure(step: str, stderr: str) -> PublishError:
    said = _last_line(stderr)
    lowered = stderr.lower()
    if step == "push" and ("rejected" in lowered or "non-fast-forward" in lowered
                           or "fetch first" in lowered):
        return PublishError(f"the remote rejected the push ({said})",
                            hint="someone else changed the branch; publish again to build on it")
    if step in ("ls-remote", "fetch", "push") and any(word in lowered for word in (
            "could not read", "does not appear to be a git repository", "could not resolve",
            "unable to access", "connection", "authentication", "permission denied",
            "repository not found", "not found")):
        return PublishError(f"the remote is unreachable ({said})", code="E_UNAVAILABLE",
                            hint="check the target's remote and that git can push to it "
                                 "from this terminal")
    if step == "commit" and ("author identity" in lowered or "tell me who you are" in lowered):
        return PublishError("git does not know who you are, so it cannot commit",
                            code="E_UNAVAILABLE",
                            hint="set it with `git config --global user.name` and "
                                 "`git config --global user.email`")
    return PublishError(f"git {step} failed: {said}")


def _target_settings(target: Any) -> tuple[str, str, float]:
    remote = target.get("remote")
    if not isinstance(remote, str) or not remote.strip():
        raise PublishError(f"the target {target.get('name')!r} has no remote: give it "
                           "remote = \"<a URL or path git can push to>\"", code="E_BAD_ARGS")
    branch = target.get("branch", DEFAULT_BRANCH)
    if not isinstance(branch, str) or not _BRANCH.match(branch):
        raise PublishError(f"the target {target.get('name')!r} has an unusable branch "
                           f"{branch!r}", code="E_BAD_ARGS")
    timeout = target.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise PublishError(f"the target {target.get('name')!r} has an unusable timeout "
                           f"{timeout!r} (seconds)", code="E_BAD_ARGS")
    return remote.strip(), branch, float(timeout)


def publish_to_git(request: PublishRequest) -> PublishResult:
    remote, branch, timeout = _target_settings(request.target)
    ref = f"refs/heads/{branch}"
    with tempfile.TemporaryDirectory(prefix="pneuma-publish-") as tmp:
        git = _Git(Path(tmp) / "repo.git", request.source_dir.resolve(), timeout)
        git.run("init", "-q")
        listed = git.run("ls-remote", "--heads", "--", remote, ref).stdout.strip()
        git.run("symbolic-ref", "HEAD", ref)
        previous: str | None = None
        if listed:
            git.run("fetch", "-q", "--depth=1", "--", remote, f"+{ref}:refs/published/{branch}")
            previous = git.run("rev-parse", f"refs/published/{branch}").stdout.strip()
            git.run("update-ref", ref, previous)
            git.run("read-tree", ref)
        # --force: exactly the folder's files, whatever an ignore file of the
        # folder's or the person's global excludes would leave out.
        git.run("add", "-A", "--force", "--", ".")
        if previous is not None and git.run("diff", "--cached", "--quiet", check=False).returncode == 0:
            return _result(request, remote, branch, previous, changed=False)
        git.run("commit", "-q", "--no-verify", "-m", request.message)
        commit = git.run("rev-parse", "HEAD").stdout.strip()
        git.run("push", "-q", "--no-verify", "--", remote, f"{ref}:{ref}")
        return _result(request, remote, branch, commit, changed=True)


def _result(request: PublishRequest, remote: str, branch: str, commit: str,
            *, changed: bool) -> PublishResult:
    pattern = request.target.get("url")
    url = fill_url(pattern, remote, branch, commit) if isinstance(pattern, str) and pattern else None
    where = f"{hide_credentials(remote)} {branch}"
    summary = (f"published to {where} as commit {commit[:12]}" if changed
               else f"nothing changed: {where} already holds these files (commit {commit[:12]})")
    return PublishResult(summary=summary, commit=commit, url=url, changed=changed)


GIT_PUBLISHER = Publisher(
    name="git",
    label={"en": "a branch of a git remote", "zh-CN": "git 远程仓库的一个分支"},
    publish=publish_to_git,
)
