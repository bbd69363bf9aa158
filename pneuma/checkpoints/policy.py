"""How big the checkpoint store may grow, and what it drops first.

The store keeps at most ``max_checkpoints`` checkpoints and, beyond the
newest one, at most ``max_blob_bytes`` on disk (file contents and the
checkpoints' JSON files together). When either bound
is passed the oldest checkpoints go first, then every blob no remaining
checkpoint refers to. The newest checkpoint is always kept whole, so the
files the next rewind needs are never half there; a single file over
``max_file_bytes`` is not kept at all (it is listed as "too big to keep",
and a restore leaves it as it is and says so).
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class StorePolicy:
    max_checkpoints: int = 200
    max_blob_bytes: int = 512 * MIB
    max_file_bytes: int = 20 * MIB

    def __post_init__(self) -> None:
        if self.max_checkpoints < 1:
            raise ValueError("max_checkpoints must be 1 or more")
        if self.max_blob_bytes < 0 or self.max_file_bytes < 0:
            raise ValueError("byte limits must be 0 or more")
