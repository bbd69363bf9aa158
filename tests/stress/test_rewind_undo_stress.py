"""Issue 23, items 2 and 7 under stress: rewinds over turns that add big
files and over checkpoints whose manifests name every permission bit. No
big file is ever lost, no restored file is setuid, setgid, sticky or wider
than the umask, and each undo brings the turn's files back."""

from __future__ import annotations

import json
import os
import random
import stat
from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, StorePolicy, restore
from tests.checkpoints.test_restore_keeps_what_undo_cannot import big_file
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

ROUNDS = 40
FILES = 12
LIMIT = 4096  # the store's size limit here: big files stay sparse and cheap
UMASK = 0o022


def _craft_every_mode(root: Path, ref: str, rng: random.Random) -> None:
    manifest = next((root / ".pneuma/checkpoints/manifests").glob(f"*-{ref}.json"))
    data = json.loads(manifest.read_text())
    for entry in data["files"].values():
        entry["mode"] = rng.randrange(0o10000)
    manifest.write_text(json.dumps(data))


def test_rewinds_never_lose_a_big_file_nor_grant_special_bits(tmp_path: Path) -> None:
    rng = random.Random(23)
    tried = {"rewinds": 0, "files": 0, "big": 0, "lost": 0, "special": 0, "wider": 0}
    previous = os.umask(UMASK)
    try:
        for n in range(ROUNDS):
            root = tmp_path / f"ws{n}"
            for i in range(FILES):
                (root / f"d{i % 3}").mkdir(parents=True, exist_ok=True)
                (root / f"d{i % 3}/f{i}.md").write_text(f"before {i}")
            store = Checkpoints(root, policy=StorePolicy(max_file_bytes=LIMIT))
            store.record("turn")
            _craft_every_mode(root, "1", rng)
            for i in range(FILES):
                path = root / f"d{i % 3}/f{i}.md"
                if rng.random() < 0.3:
                    path.unlink()
                else:
                    path.write_text(f"after {i}")
            bigs = [big_file(root, f"d{rng.randrange(3)}/big{k}.bin", LIMIT + rng.randrange(1, 10**7))
                    for k in range(rng.randrange(1, 4))]
            sizes = {big: big.stat().st_size for big in bigs}
            store.turn_ended()
            result = restore(store, "1")
            tried["rewinds"] += 1
            tried["files"] += len(result.restored)
            tried["big"] += len(bigs)
            tried["lost"] += sum(not big.exists() or big.stat().st_size != sizes[big]
                                 for big in bigs)
            for rel in result.restored:
                mode = (root / rel).stat().st_mode
                tried["special"] += bool(mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX))
                tried["wider"] += bool(stat.S_IMODE(mode) & UMASK)
            restore(store, result.undo or "")
            tried["lost"] += sum(not big.exists() for big in bigs)
    finally:
        os.umask(previous)
    record("23.2 23.7 rewind and undo", f"{count(tried['rewinds'])} rewinds and undos, {count(tried['files'])} "
                     f"files restored from manifests naming random modes, {tried['big']} big "
                     f"files added by the turns: {tried['lost']} lost, {tried['special']} "
                     f"setuid/setgid/sticky, {tried['wider']} wider than the umask")
    assert tried["lost"] == tried["special"] == tried["wider"] == 0
