"""FileWatcher (§10.1): the person's edits become ArtifactChanged events.

Only *.tex, OUTLINE.md, BRIEF.md and STYLE.md are watched. An event is
appended only when the revision really differs from the last one the log
knows, so saving a file unchanged, or the apply's own write (already
recorded by accept_patch), adds nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from watchfiles import Change, awatch

from pneuma_coauthor.artifacts import is_watched
from pneuma_coauthor.domain.events import TaskEvent
from pneuma_coauthor.workflow.usecases import CoAuthor


def _filter(root: Path) -> Callable[[Change, str], bool]:
    def accept(_change: Change, path: str) -> bool:
        try:
            rel = Path(path).resolve().relative_to(root).as_posix()
        except ValueError:
            return False
        return is_watched(rel)

    return accept


async def watch_workspace(
    app: CoAuthor,
    stop: asyncio.Event | None = None,
    on_event: Callable[[TaskEvent], None] | None = None,
    debounce_ms: int = 150,
) -> None:
    root = app.workspace
    await asyncio.to_thread(app.scan_files)  # edits made while nothing watched
    async for changes in awatch(root, watch_filter=_filter(root), stop_event=stop, debounce=debounce_ms, step=50):
        for rel in sorted({Path(p).resolve().relative_to(root).as_posix() for _c, p in changes}):
            event = await asyncio.to_thread(app.record_file_change, rel)
            if event is not None and on_event is not None:
                on_event(event)
