"""Ctrl-C that waits for a short write to finish (issue 25, item 15: an
interrupted start leaves nothing half-written)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C (SIGINT) waits until the block is done, then acts as it would
    have: seeding a workspace is never left half done. Only the main
    thread can do this; elsewhere (the launcher's checks) the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[tuple[int, FrameType | None]] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        if callable(previous):
            previous(*caught[0])
        raise KeyboardInterrupt
