"""What the browser viewer reads: the board, a task with its thread, and a
patch laid out side by side. Plain JSON-ready dicts built from the use cases'
views, so the HTTP routes (routes.py) stay thin and this shaping is tested
without a server.
"""

from __future__ import annotations

from typing import Any

from pneuma_coauthor.domain.events import TaskEvent
from pneuma_coauthor.domain.model import TaskView
from pneuma_coauthor.domain.patches import FilePatch, PatchError, parse_patch
from pneuma_coauthor.render import event_detail
from pneuma_coauthor.workflow.usecases import CoAuthor, NotFound

# The board's columns, left to right: whose move it is decides the column.
STATUS_ORDER = ("blocked", "awaiting_review", "in_progress", "claimed", "open", "done", "canceled")
PRIORITY_ORDER = {"foreground": 0, "normal": 1, "background": 2}


def event_json(event: TaskEvent) -> dict[str, Any]:
    data = event.to_json_dict()
    data["seq"] = event.seq
    data["detail"] = event_detail(event)
    return data


def task_json(view: TaskView) -> dict[str, Any]:
    return view.dump()


def board(app: CoAuthor) -> dict[str, Any]:
    """Every task, most urgent first within its status; the viewer groups them."""
    app.billboard.refresh()
    views = app.billboard.query_tasks()
    rank = {s: i for i, s in enumerate(STATUS_ORDER)}
    views.sort(key=lambda v: (rank.get(v.status.value, 99), PRIORITY_ORDER.get(v.priority.value, 9), v.task_id))
    return {
        "lastSeq": app.billboard.projector.last_seq,
        "user": app.config.user_id,
        "statuses": list(STATUS_ORDER),
        "tasks": [task_json(v) for v in views],
    }


def task_detail(app: CoAuthor, task_id: str) -> dict[str, Any]:
    """The task view, its thread in log order, and every proposal with its diff."""
    view = app.task(task_id)
    thread = app.billboard.get_thread(task_id)
    events = thread.events if thread else []
    patches: dict[str, Any] = {}
    for event in events:
        if event.type == "PatchProposed":
            p = event.payload
            patches[p.patch_id] = patch_json(app, view, p.patch_id, event)  # type: ignore[attr-defined]
    current = next((pid for pid, p in reversed(patches.items()) if p["state"] == "proposed"), None)
    return {
        "lastSeq": app.billboard.projector.last_seq,
        "task": task_json(view),
        "thread": [event_json(e) for e in events],
        "patches": patches,
        "currentPatchId": current,
    }


def find_patch(app: CoAuthor, patch_id: str) -> dict[str, Any]:
    task_id = app.find_task_of_patch(patch_id)
    view = app.task(task_id)
    for event in app.billboard.events(task_id=task_id):
        if event.type == "PatchProposed" and event.payload.patch_id == patch_id:  # type: ignore[attr-defined]
            return patch_json(app, view, patch_id, event)
    raise NotFound(f"no patch {patch_id}")


def patch_json(app: CoAuthor, view: TaskView, patch_id: str, event: TaskEvent) -> dict[str, Any]:
    """A proposal as review needs it: state, files with drift, side-by-side rows."""
    p = event.payload
    proposal = view.proposals.get(patch_id)
    files = []
    for f in p.files:  # type: ignore[attr-defined]
        current = app.artifacts.revision(f.path)
        files.append({
            "path": f.path,
            "baseRevision": f.base_revision,
            "resultRevision": f.result_revision,
            "currentRevision": current,
            # The file moved on since the proposal: accepting will ask for a rebase.
            "drifted": current != f.base_revision and current != f.result_revision,
        })
    try:
        side = side_by_side(p.diff)  # type: ignore[attr-defined]
    except PatchError:
        side = []
    return {
        "taskId": view.task_id,
        "patchId": patch_id,
        "state": proposal.state if proposal else "proposed",
        "reason": proposal.reason if proposal else None,
        "summary": p.summary,  # type: ignore[attr-defined]
        "supersedes": p.supersedes,  # type: ignore[attr-defined]
        "candidate": p.candidate,  # type: ignore[attr-defined]
        "proposedBy": event.author_actor_id,
        "proposedAt": event.timestamp,
        "diff": p.diff,  # type: ignore[attr-defined]
        "files": files,
        "sideBySide": side,
    }


# -- the side-by-side layout ---------------------------------------------------------


def side_by_side(diff: str) -> list[dict[str, Any]]:
    """Each file of a unified diff as rows of (old line, new line).

    Rows: ``{"kind": "hunk", "header": "@@ …"}`` at each hunk, then
    ``same`` (both sides), ``change`` (a removed line paired with the added
    line that replaces it, with ``mark`` spans around the part that differs),
    ``del`` (left only) and ``add`` (right only). Sides are
    ``{"n": line number, "text": line without its newline}``.
    """
    return [_file_rows(fp) for fp in parse_patch(diff)]


def _file_rows(fp: FilePatch) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for h in fp.hunks:
        rows.append({"kind": "hunk", "header": f"@@ -{h.old_start},{h.old_len} +{h.new_start},{h.new_len} @@"})
        old_n, new_n = h.old_start, h.new_start
        dels: list[str] = []
        adds: list[str] = []

        def flush(dels: list[str] = dels, adds: list[str] = adds) -> None:
            nonlocal old_n, new_n
            for i in range(max(len(dels), len(adds))):
                left = {"n": old_n, "text": dels[i]} if i < len(dels) else None
                right = {"n": new_n, "text": adds[i]} if i < len(adds) else None
                if left:
                    old_n += 1
                if right:
                    new_n += 1
                if left and right:
                    a, b = _changed_span(left["text"], right["text"])
                    left["mark"], right["mark"] = a, b
                    rows.append({"kind": "change", "left": left, "right": right})
                else:
                    rows.append({"kind": "del" if left else "add", "left": left, "right": right})
            dels.clear()
            adds.clear()

        for tag, text in h.lines:
            line = text[:-1] if text.endswith("\n") else text
            if tag == " ":
                flush()
                rows.append({"kind": "same", "left": {"n": old_n, "text": line}, "right": {"n": new_n, "text": line}})
                old_n += 1
                new_n += 1
            elif tag == "-":
                if adds:  # a '-' after '+' starts a new block
                    flush()
                dels.append(line)
            else:
                adds.append(line)
        flush()
    added, removed = fp.changed_lines()
    return {"path": fp.path, "creates": fp.creates, "deletes": fp.deletes, "added": added, "removed": removed, "rows": rows}


def _changed_span(a: str, b: str) -> tuple[list[int], list[int]]:
    """[start, end) of the differing middle of each line, snapped to word
    boundaries so a one-letter fix marks the word, not the letter."""
    limit = min(len(a), len(b))
    start = 0
    while start < limit and a[start] == b[start]:
        start += 1
    end = 0
    while end < limit - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    while start > 0 and a[start - 1].isalnum():
        start -= 1
    ea, eb = len(a) - end, len(b) - end
    while ea < len(a) and eb < len(b) and a[ea].isalnum() and b[eb].isalnum():
        ea += 1
        eb += 1
    return [start, ea], [start, eb]
