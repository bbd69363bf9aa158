"""Issue 25, item 6 under stress: the person's preferences file written by
several servers at once (a process each, as the launcher and every
workspace are), read while it is written, and fed damaged documents,
links and random changes; it never loses a change, never reads half a
file, never follows a link, and never raises on what it finds."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
from pathlib import Path
from typing import Any

import pytest

from pneuma.core.errors import ToolError
from pneuma.server.preferences import (
    LOCALES,
    MAX_DRAFTS,
    PreferenceStore,
    check_change,
)
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

WRITERS = 4
CHANGES_PER_WRITER = 60
DAMAGED_DOCUMENTS = 400
RANDOM_CHANGES = 2000


def _writer(home: str, n: int, seed: int) -> str:
    """One server: changes its workspace's draft and the person's choices;
    the last draft it wrote."""
    rng = random.Random(seed)
    store = PreferenceStore(Path(home))
    text = ""
    for i in range(CHANGES_PER_WRITER):
        text = f"writer {n} change {i} " + "字" * rng.randrange(0, 50)
        change: dict[str, Any] = {"draft": text}
        if rng.random() < 0.5:
            change["locale"] = rng.choice(LOCALES)
        if rng.random() < 0.5:
            change["chatWidth"] = rng.randrange(300, 900)
        store.change(check_change(change), f"/ws/{n}")
    return text


def test_servers_writing_at_once_lose_no_change_and_never_show_half_a_file(tmp_path: Path) -> None:
    home = tmp_path / "config" / "pneuma"
    home.mkdir(parents=True)
    context = multiprocessing.get_context("spawn")
    warnings: list[str] = []
    reader = PreferenceStore(home, warn=warnings.append)
    reads = 0
    with context.Pool(WRITERS) as pool:
        pending = pool.starmap_async(_writer, [(str(home), n, n) for n in range(WRITERS)])
        while not pending.ready():
            reader.read()  # a damaged read would warn
            reads += 1
        last_drafts = pending.get(timeout=60)
    assert warnings == [], warnings
    final = PreferenceStore(home).read()
    assert WRITERS <= MAX_DRAFTS
    for n, text in enumerate(last_drafts):
        assert final.drafts[f"/ws/{n}"].text == text, f"writer {n}'s last draft was lost"
    assert sorted(os.listdir(home)) == ["preferences.json", "preferences.json.lock"]  # no temp left
    record("6", f"{WRITERS} processes wrote {count(WRITERS * CHANGES_PER_WRITER)} changes at once "
                f"while {count(reads)} reads ran: no change lost, no half file read, no temp file left")


def _damaged(rng: random.Random) -> bytes:
    good = json.dumps({"version": 1, "locale": "zh-CN", "chatWidth": 500,
                       "chatHidden": {"editor": True},
                       "drafts": {"/ws": {"text": "x", "at": 1.0}}}).encode()
    kind = rng.randrange(5)
    if kind == 0:
        return good[: rng.randrange(len(good))]  # cut short
    if kind == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if kind == 2:
        data = bytearray(good)
        for _ in range(rng.randrange(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    values: list[Any] = [None, True, 3, -1e308, "s", [], {}, {"a": [1]}, "zh-CN", 1e309]
    document = {key: rng.choice(values) for key in ("version", "locale", "chatWidth", "chatHidden", "drafts")}
    if kind == 3:
        return json.dumps(document).encode()
    return json.dumps([document]).encode()


def test_damaged_files_and_links_give_defaults_and_never_raise(tmp_path: Path) -> None:
    rng = random.Random(25_6)
    home = tmp_path / "config" / "pneuma"
    home.mkdir(parents=True)
    path = home / "preferences.json"
    canary = tmp_path / "canary.json"
    canary_bytes = b'{"locale": "zh-CN", "chatWidth": 777}'
    canary.write_bytes(canary_bytes)
    planted_links = 0
    for i in range(DAMAGED_DOCUMENTS):
        if path.is_symlink() or path.exists():
            path.unlink()
        if i % 10 == 0:
            path.symlink_to(canary)
            planted_links += 1
        else:
            path.write_bytes(_damaged(rng))
        store = PreferenceStore(home, warn=lambda _message: None)
        preferences = store.read()
        assert preferences.locale in (None, *LOCALES)
        assert preferences.chat_width is None or isinstance(preferences.chat_width, int)
        if path.is_symlink():
            assert preferences.chat_width != 777, "the link was followed"
            with pytest.raises(OSError):
                store.change(check_change({"locale": "en"}), None)
        else:
            store.change(check_change({"locale": "en"}), "/ws")
            assert store.read().locale == "en"
    assert canary.read_bytes() == canary_bytes
    record("6", f"{count(DAMAGED_DOCUMENTS - planted_links)} damaged preference files read as the "
                f"defaults and replaced on change; {planted_links} planted links never followed")


def test_random_changes_are_checked_or_refused_by_name(tmp_path: Path) -> None:
    rng = random.Random(256)
    store = PreferenceStore(tmp_path / "pneuma")
    values: list[Any] = [None, True, 0, 420, 199, 8001, 1e309, -5, "en", "zh-CN", "fr", "",
                         "draft", [], {}, {"editor": True}, {"app": False}, {"editor": "no"},
                         {"other": True}, "x" * 20_001]
    refused = 0
    for _ in range(RANDOM_CHANGES):
        body = {rng.choice(["locale", "chatWidth", "chatHidden", "draft", "colour"]): rng.choice(values)
                for _ in range(rng.randrange(1, 4))}
        try:
            change = check_change(body)
        except ToolError as error:
            assert error.code in ("E_BAD_ARGS", "E_TOO_LARGE") and error.details.get("field")
            refused += 1
            continue
        store.change(change, "/ws")
        read = store.read()
        if "locale" in change:
            assert read.locale == change["locale"]
        if "chatWidth" in change:
            assert read.chat_width == change["chatWidth"]
    record("6", f"{count(RANDOM_CHANGES)} random preference changes: {count(refused)} refused "
                "naming their field, the rest read back as written")
