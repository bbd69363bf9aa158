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
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pneuma.checkpoints.manifest import Stored, apply, decode, encode
from pneuma.checkpoints.model import FileMap
from pneuma.core.errors import ToolError
from pneuma.core.state_files import read_state_bytes, write_state_bytes

MANIFEST_NAME = re.compile(r"^(\d{8})-(\d+|u\d+)\.json$")
Key = tuple[str, int, int, int]
# Manifests kept parsed, and whole maps kept built, for a walk over many
# checkpoints (a restore's plan, the list): each is read once, and each map
# is built from the one before it. Small deltas mostly; a whole map of a
# 1,000-file workspace is about 300 KB in memory. More manifests than the
# store keeps (200 by default): a walk longer than what is kept evicts each
# manifest just before the next walk needs it, so every plan of a rewind
# far back parsed all of them again (85 parses, 117 ms, against 2 and
# 40 ms for a rewind of 150 files over 96 checkpoints; docs/checkpoints.md,
# "Restoring"). The paths they hold bound them instead.
_PARSED_KEPT = 256
_PARSED_PATHS = 20_000
_MAPS_KEPT = 2


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
        self._parsed: OrderedDict[str, tuple[Key, Stored]] = OrderedDict()
        self._parsed_paths = 0  # in the deltas of ``_parsed`` (its bound)
        self._maps: OrderedDict[Key, tuple[FileMap, int]] = OrderedDict()
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
        key = self.key(name)
        if self.newest is not None and self.newest.name == name and key == self.newest.key:
            return self.newest.stored
        kept = self._parsed.get(name)
        if kept is not None and kept[0] == key:
            self._parsed.move_to_end(name)
            return kept[1]
        self.parsed += 1
        try:
            stored = decode(read_state_bytes(self.directory / name))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ToolError("E_IO", f"checkpoint file {name} cannot be read: {exc}",
                            details={"file": name}) from None
        if key is not None and _paths_in(stored) <= _PARSED_PATHS // 4:
            # Whole ones too (the same dicts a built map holds, not copies):
            # a rewind's plan and its restore each read the whole manifests
            # between the target and now, and parsed them twice.
            self._keep_parsed(name, key, stored)
        return stored

    def _keep_parsed(self, name: str, key: Key, stored: Stored) -> None:
        self._drop_parsed(name)
        self._parsed[name] = (key, stored)
        self._parsed_paths += _paths_in(stored)
        while len(self._parsed) > _PARSED_KEPT or \
                (self._parsed_paths > _PARSED_PATHS and len(self._parsed) > 1):
            self._drop_parsed(next(iter(self._parsed)))

    def _drop_parsed(self, name: str) -> None:
        dropped = self._parsed.pop(name, None)
        if dropped is not None:
            self._parsed_paths -= _paths_in(dropped[1])

    def forget(self, name: str) -> None:
        """Drop what is kept of a manifest that is gone."""
        self._drop_parsed(name)
        for key in [k for k in self._maps if k[0] == name]:
            del self._maps[key]

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
        pending: list[int] = []  # whose deltas to apply, newest first
        at = index
        while True:
            if at < 0:
                raise ToolError("E_IO", f"checkpoint file {names[index]} cannot be read: the "
                                "checkpoints it builds on are gone", details={"file": names[index]})
            key = self.key(names[at])
            built = self._maps.get(key) if key is not None else None
            if built is not None:
                files, deltas = built
                break
            stored = self.read(names[at])
            if stored.whole is not None:
                files, deltas = stored.whole, 0
                break
            pending.append(at)
            at -= 1
        for later_at in reversed(pending):
            earlier, later = self.read(names[later_at - 1]), self.read(names[later_at])
            if later.base != earlier.seq or later.changed is None:
                raise ToolError("E_IO", f"checkpoint file {names[index]} cannot be read: the "
                                f"checkpoint it builds on ({later.base}) is gone",
                                details={"file": names[index]})
            files = apply(earlier.end_state(files), later.changed)
            deltas += 1
        key = self.key(names[index])
        if key is not None:
            _keep(self._maps, key, (files, deltas), _MAPS_KEPT)
        return files, deltas

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


K = TypeVar("K")
V = TypeVar("V")


def _keep(kept: OrderedDict[K, V], key: K, value: V, limit: int) -> None:
    kept[key] = value
    kept.move_to_end(key)
    while len(kept) > limit:
        kept.popitem(last=False)


def _paths_in(stored: Stored) -> int:
    """The paths a manifest holds (what keeping it parsed costs)."""
    return (len(stored.changed or ()) + len(stored.after_changed or ())
            + len(stored.whole or ()) + len(stored.after_whole or ()))
