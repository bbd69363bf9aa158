"""The store's manifests as a chain: listing them by name, reading one,
rebuilding a checkpoint's whole map from the nearest whole one, and what
this process remembers between turns so that a turn costs what it changed
(docs/checkpoints.md, "The format").

What is remembered is checked, not trusted: it belongs to the newest
manifest as this process last wrote or read it (its name, inode, mtime and
size). A ``pneuma checkpoints restore`` from the terminal writes a new
manifest, and the next turn here reads again instead of using a stale map.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from pneuma.checkpoints.manifest import Stored, apply, decode, encode
from pneuma.checkpoints.model import FileMap
from pneuma.core.errors import ToolError
from pneuma.core.state_files import read_state_bytes, write_state_bytes

MANIFEST_NAME = re.compile(r"^(\d{8})-(\d+|u\d+)\.json$")
Key = tuple[str, int, int, int]


@dataclass
class Newest:
    """The newest checkpoint as this process knows it."""

    key: Key
    name: str
    stored: Stored
    files: FileMap
    deltas_in_a_row: int  # deltas since the last whole map (0: it is whole)

    @property
    def state(self) -> FileMap:
        """What the next checkpoint's delta is taken against."""
        return self.stored.end_state(self.files)


@dataclass
class Remembered:
    """Facts about the whole store this process keeps up to date itself,
    valid while ``key`` is the newest manifest's."""

    key: Key
    stored_bytes: int  # blobs and manifests on disk
    # Each content a kept checkpoint holds -> the newest seq whose manifest
    # brings it in (whole, or the new side of a delta). Pruning up to seq D
    # frees exactly the contents whose newest seq is D or less, once the
    # oldest kept checkpoint is whole (docs/checkpoints.md, "Size policy").
    # Built on the first drop of a process (it reads every manifest once).
    newest_use: dict[str, int] | None = None


class ManifestChain:
    def __init__(self, directory: Path):
        self.directory = directory
        self.newest: Newest | None = None
        self.remembered: Remembered | None = None
        # How many manifests this process has read (tests hold the cost of a
        # turn to it: it must not grow with the number of checkpoints).
        self.parsed = 0

    def names(self) -> list[str]:
        try:
            names = [n for n in os.listdir(self.directory) if MANIFEST_NAME.match(n)]
        except FileNotFoundError:
            return []
        return sorted(names)

    def key(self, name: str) -> Key | None:
        try:
            info = os.stat(self.directory / name, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return (name, info.st_ino, info.st_mtime_ns, info.st_size)

    def read(self, name: str) -> Stored:
        if self.newest is not None and self.newest.name == name and \
                self.key(name) == self.newest.key:
            return self.newest.stored
        self.parsed += 1
        try:
            return decode(read_state_bytes(self.directory / name))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ToolError("E_IO", f"checkpoint file {name} cannot be read: {exc}",
                            details={"file": name}) from None

    def write(self, name: str, stored: Stored) -> int:
        """Write one manifest (atomically); the bytes it adds to the store."""
        data = encode(stored)
        before = self.key(name)
        write_state_bytes(self.directory / name, data, 0o600)
        return len(data) - (before[3] if before else 0)

    # --- whole maps ---

    def files_of(self, names: list[str], index: int) -> tuple[FileMap, int]:
        """The whole files map of ``names[index]`` and how many deltas it took:
        back to the nearest whole manifest, then forward."""
        if self.newest is not None and index == len(names) - 1 and \
                self.newest.name == names[index] and self.key(names[index]) == self.newest.key:
            return self.newest.files, self.newest.deltas_in_a_row
        chain: list[Stored] = []
        at = index
        while True:
            if at < 0:
                raise ToolError("E_IO", f"checkpoint file {names[index]} cannot be read: the "
                                "checkpoints it builds on are gone", details={"file": names[index]})
            stored = self.read(names[at])
            chain.append(stored)
            if stored.whole is not None:
                break
            at -= 1
        chain.reverse()
        assert chain[0].whole is not None
        files = chain[0].whole
        for earlier, later in zip(chain, chain[1:]):
            if later.base != earlier.seq:
                raise ToolError("E_IO", f"checkpoint file {names[index]} cannot be read: the "
                                f"checkpoint it builds on ({later.base}) is gone",
                                details={"file": names[index]})
            assert later.changed is not None
            files = apply(earlier.end_state(files), later.changed)
        return files, len(chain) - 1

    def newest_of(self, names: list[str]) -> Newest | None:
        """The newest checkpoint, from memory when it is still the one on disk."""
        if not names:
            self.newest = None
            return None
        name = names[-1]
        key = self.key(name)
        if self.newest is not None and self.newest.name == name and key == self.newest.key:
            return self.newest
        self.newest = None
        stored = self.read(name)
        files, deltas = self.files_of(names, len(names) - 1)
        if key is None:
            return None
        self.newest = Newest(key, name, stored, files, deltas)
        return self.newest

    def became_newest(self, name: str, stored: Stored, files: FileMap, deltas: int,
                      key_before: Key | None) -> None:
        """Remember what was just written as the newest; what is remembered
        of the whole store stays valid if it was the newest before too."""
        key = self.key(name)
        if key is None:
            self.newest = None
            return
        self.newest = Newest(key, name, stored, files, deltas)
        if self.remembered is not None:
            if self.remembered.key == key_before:
                self.remembered.key = key
            else:
                self.remembered = None
