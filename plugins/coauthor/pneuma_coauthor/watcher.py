"""The person's edits become ArtifactChanged events
(docs/design/coauthor.md, "File changes"), from the host's
one file watcher.

Under ``pneuma run`` the server's watcher hands every batch of changed files
to the routes (``Pneuma.on_files_changed``); the REPL and ``agent run`` have
no server, so they run that same watcher function (``pneuma.api.
watch_workspace``) over the paper's files. Either way only *.tex,
OUTLINE.md, BRIEF.md and STYLE.md count, and an event is appended only when
the revision really differs from the last one the log knows: saving a file
unchanged, or the apply's own write (already recorded by accept_patch),
adds nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from pneuma.api import FileFilter, SelfWrites
from pneuma.api import watch_workspace as watch_files
from pneuma_coauthor.artifacts import IGNORED, WATCHED, is_watched
from pneuma_coauthor.domain.events import TaskEvent
from pneuma_coauthor.workflow.usecases import CoAuthor

# How long a burst of writes may take before it is recorded: the apply of a
# patch from another process writes its files first and logs them right
# after; recording in between would log the apply's write as the person's.
SETTLE_MS = 150


def watched_paths(files: Iterable[dict[str, Any]]) -> list[str]:
    """The paper files in a batch of changes (``[{"path", "content"|None}]``,
    as the host's watcher reports them), sorted, each once."""
    return sorted({f["path"] for f in files if isinstance(f.get("path"), str) and is_watched(f["path"])})


def record_changes(app: CoAuthor, paths: Iterable[str]) -> list[TaskEvent]:
    """ArtifactChanged for each path whose revision the log does not know (blocking)."""
    return [event for rel in paths if (event := app.record_file_change(rel)) is not None]


async def watch_workspace(
    app: CoAuthor,
    stop: asyncio.Event | None = None,
    on_event: Callable[[TaskEvent], None] | None = None,
    debounce_ms: int = SETTLE_MS,
) -> None:
    """Record the person's edits until ``stop`` is set (or the task is
    cancelled), for the REPL and ``agent run``: first the edits made while
    nothing watched, then every change the host's watcher reports."""
    stop = stop or asyncio.Event()
    await asyncio.to_thread(app.scan_files)
    batches: asyncio.Queue[list[str] | None] = asyncio.Queue()

    def publish(files: list[dict[str, Any]]) -> None:
        paths = watched_paths(files)
        if paths:
            batches.put_nowait(paths)

    async def watch() -> None:
        try:
            await watch_files(app.workspace, FileFilter(WATCHED, IGNORED), SelfWrites(), publish, stop,
                              debounce_ms=debounce_ms)
        finally:
            batches.put_nowait(None)  # the watcher ended: so does this loop

    watcher = asyncio.get_running_loop().create_task(watch())
    try:
        while (paths := await batches.get()) is not None:
            for event in await asyncio.to_thread(record_changes, app, paths):
                if on_event is not None:
                    on_event(event)
    finally:
        if not watcher.done():
            watcher.cancel()
        (outcome,) = await asyncio.gather(watcher, return_exceptions=True)
    if isinstance(outcome, Exception):
        raise outcome  # the watcher itself failed (no inotify, the folder is gone)
