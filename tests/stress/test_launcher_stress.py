"""Issue 23, items 5 and 11 under stress: hostile paths thrown at the
launcher's path-taking routes by a fuzzer (NUL bytes, lone surrogates,
over-long names, system folders and names under them, links in a scratch
folder to system folders, folders owned by another uid), and the list
file damaged again and again by several writers at once.

Each run ends with 0 5xx answers, 0 files written into any target (the
canary listings are unchanged, no generated folder exists), no request
waiting longer than 2 s, and every damaged copy of the list kept."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pneuma.startup.recent import RecentWorkspaces
from tests.launcher.conftest import launcher  # noqa: F401 (the fixture)
from tests.launcher.test_launcher_folders import listing
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

EXAMPLES = 400  # each sends 4 requests
TIME_CAP = 25.0  # seconds for the fuzzer; the counts say how far it got
SLOWEST_ALLOWED = 2.0  # seconds, for any one answer
SYSTEM = ["/", "/home", "/etc", "/usr", "/usr/share", "/var", "/var/lib", "/boot", "/proc/self",
          "/sys", "/dev", "/bin", "/sbin", "/lib", "/run"]
CANARIES = ["/", "/home", "/etc", "/usr", "/var", "/boot"]
ROUTES = ["/api/workspaces/open", "/api/workspaces/new", "/api/sessions/stop",
          "/api/workspaces/forget"]


def top_listing(folder: str) -> set[str]:
    """The names right under ``folder`` (a canary: making a workspace adds
    CLAUDE.md, .pneuma/…; mtimes are not compared, as /tmp's change all the time)."""
    try:
        return {e.name for e in os.scandir(folder)}
    except OSError:
        return set()


def post(url: str, token: str, route: str, body: dict[str, Any]) -> tuple[int, Any, float]:
    request = urllib.request.Request(
        url + route, data=json.dumps(body).encode("ascii"), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            status, data = answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        status, data = error.code, json.loads(error.read())
    return status, data, time.monotonic() - started


_word = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="/\x00"),
                min_size=1, max_size=12)
# What no file name can hold ("/.." and the like are not here: under the
# scratch folder they name folders the launcher may rightly make).
_breaker = st.sampled_from(["\x00", "\ud800", "\udcff", "a" * 256, "/" + "b" * 300,
                            "\x00/..", "\udfff/."])


def hostile_paths(links: list[Path], theirs: list[Path], scratch: Path) -> st.SearchStrategy:
    """Paths none of which the launcher may write into: under a system
    folder, through a link to one, in another user's folder, or with
    something no file name can hold (under the scratch folder)."""
    bases = st.sampled_from([*SYSTEM, *map(str, links), *map(str, theirs)])
    under_base = st.builds(lambda b, w: b if w is None else f"{b}/{w}", bases,
                           st.none() | _word)
    broken = st.builds(lambda w, b, front: f"{scratch}/{b}{w}" if front else f"{scratch}/{w}{b}",
                       _word, _breaker, st.booleans())
    return st.one_of(under_base, broken)


@pytest.mark.skipif(os.getuid() != 0, reason="folders of another uid need root to make")
async def test_hostile_launcher_paths_write_nothing_and_answer_4xx(launcher, tmp_path):  # noqa: F811
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    links = []
    for n, target in enumerate(["/etc", "/usr", "/var/lib", "/"]):
        link = scratch / f"link{n}"
        link.symlink_to(target)
        links.append(link)
    theirs = []
    for n in range(2):
        folder = tmp_path / f"theirs{n}"
        folder.mkdir()
        (folder / "notes.md").write_text("someone else's\n")
        os.chown(folder, 4242 + n, 4242 + n)
        theirs.append(folder)
    canaries = {folder: top_listing(folder) for folder in CANARIES}
    theirs_before = {folder: listing(folder) for folder in theirs}
    scratch_before = sorted(p.name for p in scratch.iterdir())
    tried = {"requests": 0, "4xx": 0, "5xx": 0, "2xx": 0, "slowest": 0.0}
    asked_new: set[str] = set()
    started = time.monotonic()

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(path=hostile_paths(links, theirs, scratch), confirm=st.none() | st.text(max_size=8))
    def fuzz(path: str, confirm: str | None) -> None:
        if time.monotonic() - started > TIME_CAP:
            return
        # Only what was not there when asked can have been made by it (a
        # link may lead to a folder that exists: scratch/link1/share).
        there_before = _exists(path)
        for route in ROUTES:
            body: dict[str, Any] = {"path": path, "mode": "doc"}
            if confirm is not None:
                body["confirm"] = confirm
            status, answer, took = post(launcher.url, launcher.token, route, body)
            tried["requests"] += 1
            tried["slowest"] = max(tried["slowest"], took)
            tried["5xx"] += status >= 500
            tried["2xx"] += status < 300
            tried["4xx"] += 400 <= status < 500
            if route.endswith("/new") and not there_before:
                asked_new.add(path)
            assert 400 <= status < 500, (route, path, answer)
            assert answer["error"]["code"].startswith("E_"), answer
            assert took < SLOWEST_ALLOWED, (route, path, took)

    await asyncio.get_running_loop().run_in_executor(None, fuzz)

    changed = [str(f) for f, before in canaries.items() if top_listing(f) != before]
    changed += [str(f) for f, before in theirs_before.items() if listing(f) != before]
    existed = {os.path.normpath(p) for p in [*SYSTEM, *map(str, links), *map(str, theirs)]}
    made = [p for p in asked_new if _exists(p) and os.path.normpath(p) not in existed]
    record("23.5 launcher paths", f"{count(tried['requests'])} hostile paths on "
           f"{len(ROUTES)} routes (NUL, surrogates, long names, {len(SYSTEM)} system folders, "
           f"{len(links)} links to them, {len(theirs)} folders of another uid): "
           f"{count(tried['4xx'])} 4xx, {tried['5xx']} 5xx, {tried['2xx']} served, "
           f"{len(changed)} canary folders changed, {len(made)} folders made, "
           f"slowest answer {tried['slowest']:.2f} s")
    assert tried["requests"] >= 200, tried
    assert (tried["5xx"], tried["2xx"], changed, made) == (0, 0, [], [])
    assert sorted(p.name for p in scratch.iterdir()) == scratch_before
    assert launcher.state.hosting.sessions() == []


def _exists(path: str) -> bool:
    if "\x00" in path:
        return False
    try:
        return os.path.lexists(os.path.expanduser(path))
    except (ValueError, UnicodeEncodeError):
        return False


DAMAGES = 240
WRITERS = 4


def test_repeated_damage_of_the_list_keeps_every_copy(tmp_path: Path) -> None:
    """Several writers damage the list and read it back at once, as
    several `pneuma run`s and the launcher would: every damaged version
    is kept under a name of its own, and the list works afterwards."""
    home = tmp_path / "pneuma-home"
    home.mkdir()
    list_file = home / "workspaces.json"
    damaged: set[str] = set()
    lock = threading.Lock()
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        recent = RecentWorkspaces(home, warn=lambda line: None)
        for n in range(DAMAGES // WRITERS):
            text = f'{{"damage": "{k}-{n}"'  # not JSON
            # The damage and its reading happen under the list's own lock, as a
            # writer's read-modify-write would: so each damaged text is read.
            with recent._locked():
                temporary = home / f".damage-{k}"
                temporary.write_text(text)
                os.replace(temporary, list_file)
                with lock:
                    damaged.add(text)
                try:
                    recent._read_locked()
                except (OSError, ValueError) as exc:  # counted, then failed below
                    errors.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=writer, args=(k,)) for k in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    took = time.monotonic() - started
    kept = {p.read_text() for p in home.iterdir() if ".damaged-" in p.name}
    RecentWorkspaces(home).record(tmp_path / "after", "doc")
    record("23.11 launcher list", f"{count(len(damaged))} damages of workspaces.json by {WRITERS} "
           f"writers in {took:.1f} s: {count(len(kept))} copies kept, "
           f"{len(damaged - kept)} lost, {len(errors)} errors")
    assert errors == []
    assert kept == damaged
    assert [e.mode for e in RecentWorkspaces(home).entries()] == ["doc"]
