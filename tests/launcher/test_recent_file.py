"""The launcher's list file under hostile conditions (issue 23, item 11):
every damaged copy kept under a name of its own, and a list that is a
FIFO, a folder or a link refused at once with the file named — in the
list itself and through the launcher's API."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import aiohttp
import pytest

from pneuma.startup.recent import RecentWorkspaces, UnusableList


def test_six_damages_in_a_row_keep_six_copies(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    warnings: list[str] = []
    recent = RecentWorkspaces(home, warn=warnings.append)
    for n in range(6):  # within one second, as a flapping disk or editor would
        (home / "workspaces.json").write_text(f'{{"damaged": {n}')
        assert recent.entries() == []
    kept = sorted(p.read_text() for p in home.iterdir() if ".damaged-" in p.name)
    assert kept == sorted(f'{{"damaged": {n}' for n in range(6))
    assert len(warnings) == 6 and all("moved to" in w for w in warnings)


def _entries_within(recent: RecentWorkspaces, seconds: float) -> OSError | list:
    outcome: list = []

    def read() -> None:
        try:
            outcome.append(recent.entries())
        except OSError as exc:  # the answer under test
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(seconds)
    return outcome[0] if outcome else TimeoutError(f"still reading after {seconds} s")


def test_a_fifo_as_the_list_is_refused_at_once_naming_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    fifo = home / "workspaces.json"
    os.mkfifo(fifo)
    try:
        got = _entries_within(RecentWorkspaces(home), 5.0)
        assert isinstance(got, UnusableList), got
        assert str(fifo) in str(got) and "FIFO" in str(got)
        with pytest.raises(UnusableList):
            RecentWorkspaces(home).record(tmp_path / "w", "doc")
        assert fifo.is_fifo()  # refused, not replaced
    finally:
        # Lets a reader stuck on today's code go (a FIFO opened for writing).
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK) if _has_reader(fifo) else None
        if fd is not None:
            os.close(fd)


def _has_reader(fifo: Path) -> bool:
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        return True
    except OSError:
        return False


def test_a_folder_or_a_link_as_the_list_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "workspaces.json").mkdir()
    with pytest.raises(UnusableList, match="is a folder"):
        RecentWorkspaces(home).entries()
    os.rmdir(home / "workspaces.json")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"workspaces": []}')
    (home / "workspaces.json").symlink_to(elsewhere)
    with pytest.raises(UnusableList, match="symbolic link"):
        RecentWorkspaces(home).record(tmp_path / "w", "doc")
    assert elsewhere.read_text() == '{"workspaces": []}'


async def test_the_launcher_names_the_list_file_instead_of_hanging(launcher, tmp_path) -> None:
    fifo = launcher.state.recent.path
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    try:
        status, body = await launcher.call("GET", "/api/workspaces",
                                           timeout=aiohttp.ClientTimeout(total=5))
        assert (status, body["error"]["code"]) == (409, "E_CONFLICT"), body
        assert str(fifo) in body["error"]["message"]
        assert body["error"]["details"] == {"reason": "list_file", "file": str(fifo)}
    finally:
        if _has_reader(fifo):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
