"""File contents by SHA-256: ``blobs/<first 2 hex>/<the other 62>``.

The same content is stored once however many files and checkpoints hold
it. A blob is written to a temp file and renamed into place, and only then
does a manifest name it, so a manifest never refers to half a blob; a crash
can at worst leave a blob no manifest names, which the next garbage
collection removes. Blobs are not fsynced one by one (that made the first
recording of a 2,000-file workspace take 17 s instead of about 1): after a
power cut a blob may come back empty, which ``get`` detects by its hash and
a restore reports for that file.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from pneuma.core.files import temp_name
from pneuma.core.state_files import ensure_dir, read_state_bytes

_HEX = re.compile(r"^[0-9a-f]{64}$")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_regular(path: Path) -> bool:
    """A blob is there: a regular file itself, never a link to one."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


class BlobStore:
    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def path(self, digest: str) -> Path:
        if not _HEX.match(digest):
            # A manifest edited by hand must not name a path outside the store.
            raise ValueError(f"not a SHA-256 digest: {digest!r}")
        return self.directory / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        return _is_regular(self.path(digest))

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
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return digest

    def get(self, digest: str) -> bytes:
        data = read_state_bytes(self.path(digest))
        if sha256(data) != digest:
            raise OSError(f"blob {digest[:12]} is damaged (its content does not match its name)")
        return data

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

    def remove(self, digest: str) -> None:
        try:
            self.path(digest).unlink()
        except FileNotFoundError:
            pass
