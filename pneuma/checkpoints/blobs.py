"""File contents by SHA-256: ``blobs/<first 2 hex>/<the other 62>``.

The same content is stored once however many files and checkpoints hold
it. A blob is written to a temp file and renamed into place, and only then
does a manifest name it, so a manifest never refers to half a blob; a crash
can at worst leave a blob no manifest names, which the next garbage
collection removes. Blobs are not fsynced one by one (that made the first
recording of a 2,000-file workspace take 17 s instead of about 1): after a
power cut a blob may come back empty, which ``get`` detects by its hash and
a restore reports for that file.

A blob that compresses well (text, mostly) is kept zlib-compressed behind
``PACKED``; one that does not (pictures, archives) is kept as it is. Its
name stays the SHA-256 of the content itself, so the same content is still
stored once, and a reader checks the unpacked bytes against the name (a
file whose own content happens to begin with ``PACKED`` is told apart by
that check).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import threading
import zlib
from collections.abc import Iterable
from pathlib import Path

from pneuma.core.files import temp_name
from pneuma.core.state_files import StateFolderReader, ensure_dir, read_state_bytes

_HEX = re.compile(r"^[0-9a-f]{64}$")
PACKED = b"\x00pneuma-z\x01"
# Below this a blob is one disk block however it is kept.
_PACK_FROM = 512
# A sample of this many bytes decides whether the whole is worth compressing.
_SAMPLE = 4 * 1024
# Compressed is kept only when it saves at least a tenth.
_WORTH = 0.9
_DEFAULT_MAX = 64 * 1024 * 1024
# Blobs known to be there, at most (about 100 bytes each).
_PRESENT_KEPT = 200_000


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_regular(path: Path) -> bool:
    """A blob is there: a regular file itself, never a link to one."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def pack(data: bytes) -> bytes:
    """What is written for ``data``: compressed behind ``PACKED`` when that
    saves a tenth, else ``data`` itself."""
    if len(data) < _PACK_FROM:
        return data
    sample = data[:_SAMPLE]
    if len(zlib.compress(sample, 1)) > _WORTH * len(sample):
        return data  # random-looking: compressing the whole would only cost time
    packed = PACKED + zlib.compress(data, 6)
    return packed if len(packed) <= _WORTH * len(data) else data


def unpack(stored: bytes, digest: str, limit: int) -> bytes:
    """The content named ``digest`` from what was written for it, never
    more than ``limit`` bytes; OSError when neither reading matches."""
    if stored.startswith(PACKED):
        try:
            inflate = zlib.decompressobj()
            data = inflate.decompress(stored[len(PACKED):], limit + 1)
            if len(data) <= limit and inflate.eof and sha256(data) == digest:
                return data
        except zlib.error:
            pass
    if sha256(stored) != digest:
        raise OSError(f"blob {digest[:12]} is damaged (its content does not match its name)")
    return stored


class BlobStore:
    def __init__(self, directory: Path, max_bytes: int = _DEFAULT_MAX):
        self.directory = Path(directory)
        self.max_bytes = max(max_bytes, 1)
        # Bytes written by ``put`` not yet taken (the store's size accounting
        # adds them up rather than walking every blob).
        self._written = 0
        self._present: set[str] = set()
        # Blobs this object wrote and has not synced, and those it knows are
        # on disk (synced here): a rewind syncs the contents of its undo
        # point before it replaces anything, and skips what is known to be
        # there (``sync_new`` after each turn makes most of it so).
        self._unsynced: list[str] = []
        self._durable: set[str] = set()
        self._sync_lock = threading.Lock()

    def take_written(self) -> int:
        """The bytes ``put`` wrote since the last call."""
        written, self._written = self._written, 0
        return written

    def path(self, digest: str) -> Path:
        if not _HEX.match(digest):
            # A manifest edited by hand must not name a path outside the store.
            raise ValueError(f"not a SHA-256 digest: {digest!r}")
        return self.directory / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        """Whether the blob is there: a regular file, never a link."""
        if not _HEX.match(digest):
            raise ValueError(f"not a SHA-256 digest: {digest!r}")
        try:
            info = os.lstat(f"{self.directory}/{digest[:2]}/{digest[2:]}")
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode)

    def known(self, digest: str) -> bool:
        """``has``, taking a blob this object stored or found before to be
        there still, without a look: a recording asks this once per
        unchanged file. (Pruning frees only blobs no kept checkpoint names,
        through ``remove``; a blob swapped for a link behind its back is
        refused when it is read.)"""
        if digest in self._present:
            return True
        if not self.has(digest):
            return False
        self._seen(digest)
        return True

    def take_unsynced(self) -> list[str]:
        """The blobs written since the last call (to sync them)."""
        with self._sync_lock:
            taken, self._unsynced = self._unsynced, []
        return taken

    def not_known_durable(self, digests: Iterable[str]) -> list[str]:
        """Those of ``digests`` not synced by this object (or all of them)."""
        with self._sync_lock:
            return [d for d in digests if d not in self._durable]

    def mark_durable(self, digests: Iterable[str]) -> None:
        """``digests`` were synced, with their folders."""
        with self._sync_lock:
            if len(self._durable) >= _PRESENT_KEPT:
                self._durable.clear()
            self._durable.update(digests)

    def _seen(self, digest: str) -> None:
        if len(self._present) >= _PRESENT_KEPT:
            self._present.clear()
        self._present.add(digest)

    def put(self, data: bytes, digest: str | None = None) -> str:
        digest = digest or sha256(data)
        path = self.path(digest)
        if _is_regular(path):
            return digest
        ensure_dir(path.parent)  # never a fan-out folder that is a link
        tmp = path.parent / temp_name(path.name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            stored = pack(data)
            with os.fdopen(fd, "wb") as handle:
                handle.write(stored)
            os.replace(tmp, path)
            self._written += len(stored)
            self._seen(digest)
            with self._sync_lock:
                self._unsynced.append(digest)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return digest

    def get(self, digest: str) -> bytes:
        return unpack(read_state_bytes(self.path(digest)), digest, self.max_bytes)

    def reader(self) -> "BlobReader":
        """Many contents read as ``get`` reads one, with the store's folders
        opened once (a rewind reads one per file it writes back)."""
        return BlobReader(self)

    def sizes(self) -> dict[str, int]:
        """Every stored blob and its size on disk."""
        found: dict[str, int] = {}
        if not self.directory.is_dir():
            return found
        for sub in os.scandir(self.directory):
            if not sub.is_dir(follow_symlinks=False) or len(sub.name) != 2:
                continue
            for entry in os.scandir(sub.path):
                digest = sub.name + entry.name
                if _HEX.match(digest) and entry.is_file(follow_symlinks=False):
                    found[digest] = entry.stat(follow_symlinks=False).st_size
        return found

    def remove(self, digest: str) -> int:
        """Remove the blob; the bytes that freed (0 when it was not there)."""
        self._present.discard(digest)
        return unlink_counting(self.path(digest))


class BlobReader:
    """``get`` over one walk of the store's folders (StateFolderReader);
    close it (``with``) when done."""

    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs
        self._folder = StateFolderReader(blobs.directory)

    def get(self, digest: str) -> bytes:
        if not _HEX.match(digest):
            raise ValueError(f"not a SHA-256 digest: {digest!r}")
        return unpack(self._folder.read_bytes(f"{digest[:2]}/{digest[2:]}"), digest,
                      self.blobs.max_bytes)

    def close(self) -> None:
        self._folder.close()

    def __enter__(self) -> "BlobReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def unlink_counting(path: Path) -> int:
    """Remove a file of the store; the bytes that freed (0 when it was not
    there). Never follows a link: a link's own size is counted."""
    try:
        size = path.lstat().st_size
        path.unlink()
    except FileNotFoundError:
        return 0
    return size
