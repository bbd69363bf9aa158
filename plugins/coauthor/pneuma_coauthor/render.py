"""Plain-text one-liners for events and tasks, shared by the CLI and the REPL."""

from __future__ import annotations

from pneuma_coauthor.domain.events import TaskEvent
from pneuma_coauthor.domain.model import TaskView


def short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def event_detail(event: TaskEvent) -> str:
    p = event.payload
    t = event.type
    if t == "TaskCreated":
        refs = ",".join(r.label() for r in p.artifact_refs)  # type: ignore[attr-defined]
        return f"intent={short(p.intent)!r}" + (f" refs={refs}" if refs else "") + f" priority={p.priority.value}"  # type: ignore[attr-defined]
    if t == "TaskRouted":
        return f"assignedTo={p.assigned_to} rule={p.rule}"  # type: ignore[attr-defined]
    if t in ("TaskClaimed", "TaskRebased"):
        revs = " ".join(f"{k}@{v[7:15] if v.startswith('sha256:') else v}" for k, v in p.base_revisions.items())  # type: ignore[attr-defined]
        return revs + (f" reason={short(p.reason)!r}" if t == "TaskRebased" and p.reason else "")  # type: ignore[attr-defined]
    if t == "AgentPlanPosted":
        q = f" questions={len(p.questions)}" if p.questions else ""  # type: ignore[attr-defined]
        return f"goal={short(p.goal, 70)!r}{q}"  # type: ignore[attr-defined]
    if t == "PatchProposed":
        files = ",".join(f.path for f in p.files)  # type: ignore[attr-defined]
        return f"{p.patch_id} files={files} summary={short(p.summary, 60)!r}"  # type: ignore[attr-defined]
    if t in ("PatchAccepted",):
        return p.patch_id  # type: ignore[attr-defined]
    if t == "PatchRejected":
        return f"{p.patch_id} reason={short(p.reason, 60)!r}"  # type: ignore[attr-defined]
    if t == "PatchApplied":
        return f"{p.patch_id} " + " ".join(f"{k}@{v[7:15]}" for k, v in p.revisions.items())  # type: ignore[attr-defined]
    if t == "TaskNeedsRebase":
        return f"{p.patch_id} {short(p.reason, 80)}"  # type: ignore[attr-defined]
    if t == "ArtifactChanged":
        rev = p.revision[7:15] if p.revision.startswith("sha256:") else p.revision  # type: ignore[attr-defined]
        return f"{p.path}@{rev} source={p.source}"  # type: ignore[attr-defined]
    if t == "UserFeedbackPosted":
        return f"{p.kind}: {short(p.text, 70)!r}"  # type: ignore[attr-defined]
    if t == "BuildChecked":
        return f"{p.status} {p.tool or ''} {p.duration_ms}ms {short(p.detail, 60)}".strip()  # type: ignore[attr-defined]
    if t == "LlmCallTraced":
        err = f" error={short(p.error, 50)!r}" if p.error else ""  # type: ignore[attr-defined]
        return f"profile={p.profile} model={p.model} purpose={p.purpose} tokens={p.input_tokens}+{p.output_tokens} {p.duration_ms}ms{err}"  # type: ignore[attr-defined]
    if t in ("TaskCompleted",):
        return short(p.summary, 80)  # type: ignore[attr-defined]
    if t in ("TaskFailed", "TaskCanceled"):
        return short(p.reason, 80)  # type: ignore[attr-defined]
    return ""


def event_line(event: TaskEvent) -> str:
    """Type first, then seq, task, author, time and the gist of the payload."""
    return f"{event.type} #{event.seq} {event.task_id or '-'} {event.author_actor_id} {event.timestamp} {event_detail(event)}".rstrip()


def task_line(view: TaskView) -> str:
    refs = ",".join(r.label() for r in view.artifact_refs)
    pending = [p.patch_id for p in view.pending_proposals()]
    extra = f" review={','.join(pending)}" if pending else ""
    return f"{view.task_id} {view.status.value:<15} {view.priority.value:<10} {short(view.intent, 60)!r}" + (f" [{refs}]" if refs else "") + extra
