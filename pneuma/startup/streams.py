"""Standard streams that may outlive whoever reads them.

``pneuma run`` keeps serving after the terminal or supervisor that started
it went away; its stdout and stderr are then a pipe with no reader (EPIPE)
or a hung-up terminal (EIO). A message written then must not turn a clean
stop into a traceback and exit status 1: the first failed write points the
file descriptor at /dev/null (so the agent's inherited stderr, logging and
the interpreter's final flush stop failing too) and the message is dropped.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import Any, TextIO

_GONE = (errno.EPIPE, errno.EIO, errno.ENXIO, errno.EBADF)


class ForgivingStream(io.TextIOBase):
    """A text stream that gives up quietly once its reader is gone."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._gone = False

    def _give_up(self) -> None:
        self._gone = True
        try:
            fd = self._stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def _guarded(self, call: Any, *args: Any) -> Any:
        if self._gone:
            return None
        try:
            return call(*args)
        except OSError as exc:
            if exc.errno not in _GONE:
                raise
            self._give_up()
            return None

    def write(self, text: str) -> int:
        self._guarded(self._stream.write, text)
        return len(text)

    def flush(self) -> None:
        self._guarded(self._stream.flush)

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return not self._gone and self._stream.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._stream.errors


def guard_standard_streams() -> None:
    """Wrap sys.stdout and sys.stderr (once; before logging is set up, so
    that its handler writes through the guard)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, ForgivingStream):
            setattr(sys, name, ForgivingStream(stream))
