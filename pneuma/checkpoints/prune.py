"""Keeping the store within its policy (pneuma.checkpoints.policy) at the
cost of what is dropped, not of what is kept.

The oldest checkpoints go first. Before they go, the oldest one kept is
written whole (it may be a delta against one that goes), and only then are
the older manifests removed: a kill -9 at any point leaves a chain that
reads. A content is freed when no kept checkpoint holds it: the newest
manifest bringing it in (``Remembered.newest_use``) is among those dropped.
That map is built once a process, reading every manifest, and kept up to
date by each write after; the same pass frees blobs no manifest names (left
by a kill -9 between storing a file and writing its manifest) once they are
ten minutes old.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

from pneuma.checkpoints.blobs import BlobStore, unlink_counting
from pneuma.checkpoints.chain import ManifestChain, Remembered
from pneuma.checkpoints.policy import StorePolicy

# A blob no manifest names is freed once it is this old: the turn listener
# stores a turn's files before the manifest naming them is written
# (pneuma.checkpoints.baseline), perhaps while another process prunes.
_ORPHAN_AGE_S = 600


def remembered(chain: ManifestChain, blobs: BlobStore, names: list[str]) -> Remembered:
    """What is remembered of the store, counted again when it may be stale."""
    key = chain.key(names[-1]) if names else ("", 0, 0, 0)
    if chain.remembered is not None and chain.remembered.key == key:
        return chain.remembered
    assert key is not None
    blobs.take_written()  # counted by the walk below
    total = sum(blobs.sizes().values()) + _manifest_bytes(chain.directory, names)
    chain.remembered = Remembered(key=key, stored_bytes=total)
    return chain.remembered


def note_written(chain: ManifestChain, added_bytes: int, seq: int, hashes: set[str]) -> None:
    """Account a manifest just written (``added_bytes`` with its new blobs)."""
    memory = chain.remembered
    if memory is None:
        return
    memory.stored_bytes += added_bytes
    if memory.newest_use is not None:
        for digest in hashes:
            if memory.newest_use.get(digest, 0) < seq:
                memory.newest_use[digest] = seq


def prune(chain: ManifestChain, blobs: BlobStore, policy: StorePolicy) -> int:
    """Drop the oldest checkpoints past ``max_checkpoints``, then while the
    store passes ``max_blob_bytes`` (never the newest); how many went."""
    names = chain.names()
    if not names:
        return 0
    memory = remembered(chain, blobs, names)
    drop = max(len(names) - policy.max_checkpoints, 0)
    if drop == 0 and memory.stored_bytes <= policy.max_blob_bytes:
        return 0
    dropped = 0
    while drop > 0 or (memory.stored_bytes > policy.max_blob_bytes and len(names) > 1):
        count = max(drop, 1)
        _drop_oldest(chain, blobs, names, count, memory)
        names = names[count:]
        dropped += count
        drop = 0
    return dropped


def _drop_oldest(chain: ManifestChain, blobs: BlobStore, names: list[str], count: int,
                 memory: Remembered) -> None:
    if memory.newest_use is None:
        memory.newest_use = _build_newest_use(chain, blobs, names, memory)
    newest_use = memory.newest_use
    keep = names[count]
    stored = chain.read(keep)
    if stored.whole is None:
        files, _ = chain.files_of(names, count)
        stored = replace(stored, whole=files, changed=None, base=None)
        key_before = chain.key(names[-1])
        memory.stored_bytes += chain.write(keep, stored)
        if count == len(names) - 1:
            chain.became_newest(keep, stored, files, 0, key_before)
    for digest in stored.hashes():
        newest_use[digest] = max(newest_use.get(digest, 0), stored.seq)
    last_dropped = int(names[count - 1][:8])
    # Newest first: a kill -9 half way leaves the older ones a chain that
    # still reads (each delta's base is there), dropped at the next pass.
    for name in reversed(names[:count]):
        memory.stored_bytes -= unlink_counting(chain.directory / name)
        chain.forget(name)
    for digest, seq in list(newest_use.items()):
        if seq <= last_dropped:
            memory.stored_bytes -= blobs.remove(digest)
            del newest_use[digest]


def _build_newest_use(chain: ManifestChain, blobs: BlobStore, names: list[str],
                      memory: Remembered) -> dict[str, int]:
    newest_use: dict[str, int] = {}
    for name in names:
        stored = chain.read(name)
        for digest in stored.hashes():
            newest_use[digest] = stored.seq
    settled = time.time() - _ORPHAN_AGE_S
    for digest in blobs.sizes().keys() - newest_use.keys():
        try:
            if blobs.path(digest).lstat().st_mtime > settled:
                continue  # perhaps stored for a checkpoint being written now
        except FileNotFoundError:
            continue
        memory.stored_bytes -= blobs.remove(digest)
    return newest_use


def _manifest_bytes(directory: Path, names: list[str]) -> int:
    total = 0
    for name in names:
        try:
            total += os.stat(directory / name, follow_symlinks=False).st_size
        except FileNotFoundError:
            pass
    return total
