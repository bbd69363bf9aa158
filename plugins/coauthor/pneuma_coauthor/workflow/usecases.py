"""Application use cases (docs/design/coauthor.md, "Use cases"): what every adapter calls.

The REPL, the CLI subcommands, the browser routes and the agent workflow all
go through these functions, so "accept" means the same revision checks
whoever clicks it. Each use case turns a request into events; the only file
writes in CoAuthor happen in ``accept_patch``, after the person accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pneuma_coauthor.artifacts import ArtifactStore, is_watched
from pneuma_coauthor.billboard import Billboard, billboard_dir
from pneuma_coauthor.build import run_build
from pneuma_coauthor.config import CoAuthorConfig, load_config
from pneuma_coauthor.domain import events as ev
from pneuma_coauthor.domain.events import new_event
from pneuma_coauthor.domain.model import ArtifactRef, Priority, TaskView
from pneuma_coauthor.domain.patches import (
    FilePatch,
    PatchConflict,
    PatchError,
    apply_file_patch,
    parse_patch,
    summarize,
)
from pneuma_coauthor.domain.state import InvalidTransition
from pneuma_coauthor.policies import RouterPolicy


class UseCaseError(ValueError):
    """A request that cannot be carried out; the message is for the person."""


class NotFound(UseCaseError):
    """The task or patch named does not exist."""


class NotAllowed(UseCaseError):
    """The actor may not do this (a capability it lacks)."""


@dataclass
class ApplyResult:
    patch_id: str
    status: str  # "applied" or "needs_rebase"
    revisions: dict[str, str] = field(default_factory=dict)
    drifted: list[ev.Drift] = field(default_factory=list)
    reason: str = ""
    build: ev.BuildChecked | None = None


class CoAuthor:
    """The use cases over one workspace's billboard and files."""

    def __init__(self, workspace: Path, billboard: Billboard | None = None, config: CoAuthorConfig | None = None):
        self.workspace = workspace.resolve()
        self.billboard = billboard or Billboard.open(self.workspace)
        self.config = config or load_config(self.workspace)
        self.artifacts = ArtifactStore(self.workspace)
        self.router = RouterPolicy()

    def close(self) -> None:
        self.billboard.close()

    @property
    def patches_dir(self) -> Path:
        return billboard_dir(self.workspace) / "patches"

    def task(self, task_id: str) -> TaskView:
        self.billboard.refresh()
        view = self.billboard.get_task(task_id)
        if view is None:
            raise NotFound(f"no task {task_id}")
        return view

    # -- creating and steering tasks --------------------------------------------

    def create_task(
        self,
        intent: str,
        *,
        author: str | None = None,
        refs: list[ArtifactRef] | None = None,
        priority: Priority = Priority.FOREGROUND,
        intent_data: dict | None = None,
        assigned_to: str | None = None,
    ) -> TaskView:
        """TaskCreated plus the router's TaskRouted, appended together."""
        author = author or self.config.user_id
        for ref in refs or []:
            self.artifacts.resolve(ref.path)  # refuse paths outside the paper early
        payload = ev.TaskCreated(
            intent=intent,
            intent_data=intent_data or {},
            priority=priority,
            artifact_refs=refs or [],
            assigned_to=assigned_to,
        )
        for _ in range(5):  # another process may take the same t-NNN first
            self.billboard.refresh()
            task_id = self.billboard.next_task_id()
            created = new_event("TaskCreated", task_id, author, payload)
            from pneuma_coauthor.domain.state import new_view

            decision = self.router.route(new_view(created), self.config.actors.get(author), self.config.actors)
            routed = new_event(
                "TaskRouted", task_id, "router", ev.TaskRouted(assigned_to=decision.assigned_to, rule=decision.rule)
            )
            try:
                self.billboard.append_events([created, routed])
            except InvalidTransition:
                continue
            view = self.billboard.get_task(task_id)
            assert view is not None
            return view
        raise UseCaseError("could not allocate a task id")

    def post_feedback(self, task_id: str, text: str, *, author: str | None = None, kind: str = "followup") -> None:
        self._append("UserFeedbackPosted", task_id, author, ev.UserFeedbackPosted(text=text, kind=kind))  # type: ignore[arg-type]

    def cancel(self, task_id: str, reason: str = "", *, author: str | None = None) -> None:
        self._append("TaskCanceled", task_id, author, ev.TaskCanceled(reason=reason))

    def complete(self, task_id: str, summary: str, *, author: str | None = None) -> None:
        self._append("TaskCompleted", task_id, author, ev.TaskCompleted(summary=summary))

    def _append(self, kind: str, task_id: str, author: str | None, payload: ev.Payload) -> ev.TaskEvent:
        self.task(task_id)  # a clear "no task" message before the transition check
        try:
            return self.billboard.append_event(new_event(kind, task_id, author or self.config.user_id, payload))
        except InvalidTransition as exc:
            raise UseCaseError(str(exc)) from exc

    # -- proposals ---------------------------------------------------------------

    def next_patch_id(self, view: TaskView) -> str:
        n = len(view.proposals) + 1
        while f"{view.task_id}-p{n}" in view.proposals:
            n += 1
        return f"{view.task_id}-p{n}"

    def propose_patch(
        self,
        task_id: str,
        diff: str,
        *,
        author: str | None = None,
        default_path: str | None = None,
        summary: str = "",
        supersedes: str | None = None,
        candidate: int | None = None,
        base_revisions: dict[str, str] | None = None,
        patch_id: str | None = None,
    ) -> ev.TaskEvent:
        """Record a patch proposal after checking it applies cleanly now.

        The base revision of each file is its current revision (or the one
        the caller says it diffed against, which must still be current): a
        proposal that would not apply is refused here, not at accept time.
        """
        view = self.task(task_id)
        try:
            file_patches = parse_patch(diff, default_path=default_path)
        except PatchError as exc:
            raise UseCaseError(f"not a usable diff: {exc}") from exc
        files: list[ev.PatchFile] = []
        for fp in file_patches:
            text, revision = self.artifacts.read(fp.path)
            expected = (base_revisions or {}).get(fp.path)
            if expected is not None and expected != revision:
                raise UseCaseError(f"{fp.path} changed while the patch was written (drift); rebase first")
            try:
                new_text = apply_file_patch(text, fp)
            except PatchConflict as exc:
                raise UseCaseError(f"the diff does not apply to the current {fp.path}: {exc}") from exc
            from pneuma_coauthor.domain.model import revision_of

            result = revision_of(new_text.encode("utf-8")) if new_text is not None else "none"
            files.append(ev.PatchFile(path=fp.path, base_revision=revision, result_revision=result))
        patch_id = patch_id or self.next_patch_id(view)
        normalized = _normalize_diff(diff, file_patches)
        payload = ev.PatchProposed(
            patch_id=patch_id,
            files=files,
            diff=normalized,
            summary=summary or summarize(file_patches),
            supersedes=supersedes,
            candidate=candidate,
        )
        stored = self._append("PatchProposed", task_id, author, payload)
        self._write_patch_file(task_id, payload)
        return stored

    def _write_patch_file(self, task_id: str, p: ev.PatchProposed) -> Path:
        """The same header format the skill teaches (references/patch-format.md),
        so a patch proposed here and one drafted by hand read alike."""
        lines = ["# coauthor-patch 1", f"# patchId: {p.patch_id}", f"# taskId: {task_id}"]
        lines.append("# summary: " + " ".join(p.summary.split()))
        if p.supersedes:
            lines.append(f"# supersedes: {p.supersedes}")
        lines += [f"# file: {f.path} base={f.base_revision} result={f.result_revision}" for f in p.files]
        self.patches_dir.mkdir(parents=True, exist_ok=True)
        path = self.patches_dir / f"{p.patch_id}.diff"
        path.write_text("\n".join(lines) + "\n" + p.diff, encoding="utf-8")
        return path

    def resolve_patch(self, view: TaskView, ref: str) -> str:
        if ref in ("latest", "last"):
            pending = [p for p in view.proposals.values() if p.state == "proposed"]
            if not pending:
                raise UseCaseError(f"task {view.task_id} has no patch awaiting review")
            return pending[-1].patch_id
        if ref.isdigit():
            ref = f"{view.task_id}-p{ref}"
        if ref not in view.proposals:
            raise NotFound(f"task {view.task_id} has no patch {ref}")
        return ref

    def find_task_of_patch(self, patch_id: str) -> str:
        self.billboard.refresh()
        for view in self.billboard.query_tasks():
            if patch_id in view.proposals:
                return view.task_id
        raise NotFound(f"no patch {patch_id}")

    def proposal_event(self, task_id: str, patch_id: str) -> ev.PatchProposed:
        for event in self.billboard.events(task_id=task_id):
            if event.type == "PatchProposed" and event.payload.patch_id == patch_id:  # type: ignore[attr-defined]
                return event.payload  # type: ignore[return-value]
        raise NotFound(f"no patch {patch_id}")

    # -- review --------------------------------------------------------------------

    def reject_patch(self, task_id: str, ref: str, reason: str = "", *, author: str | None = None) -> str:
        patch_id = self.resolve_patch(self.task(task_id), ref)
        self._append("PatchRejected", task_id, author, ev.PatchRejected(patch_id=patch_id, reason=reason))
        return patch_id

    def accept_patch(self, task_id: str, ref: str, *, author: str | None = None, build: bool = True) -> ApplyResult:
        """PatchAccepted, then ApplyPatch (docs/design/coauthor.md, "Apply"):

        1. every file must still be at the patch's base revision, else
           TaskNeedsRebase and nothing is written (the person's edit wins);
        2. every hunk must apply cleanly, else TaskNeedsRebase too;
        3. files are written atomically, then PatchApplied + ArtifactChanged,
           the optional build, and TaskCompleted.
        """
        author = author or self.config.user_id
        actor = self.config.actors.get(author)
        if actor is not None and not actor.can("apply_patch"):
            raise NotAllowed(f"{author} may not apply patches")
        view = self.task(task_id)
        patch_id = self.resolve_patch(view, ref)
        proposal = self.proposal_event(task_id, patch_id)
        self._append("PatchAccepted", task_id, author, ev.PatchAccepted(patch_id=patch_id))

        drifted: list[ev.Drift] = []
        current: dict[str, tuple[str | None, str]] = {}
        for f in proposal.files:
            text, revision = self.artifacts.read(f.path)
            current[f.path] = (text, revision)
            if revision != f.base_revision:
                drifted.append(ev.Drift(path=f.path, expected=f.base_revision, actual=revision))
        if drifted:
            names = ", ".join(d.path for d in drifted)
            return self._needs_rebase(task_id, patch_id, drifted, f"{names} changed after the patch was proposed")

        new_texts: dict[str, str | None] = {}
        try:
            for fp in parse_patch(proposal.diff):
                new_texts[fp.path] = apply_file_patch(current[fp.path][0], fp)
        except (PatchConflict, PatchError, KeyError) as exc:
            return self._needs_rebase(task_id, patch_id, [], f"the patch does not apply cleanly: {exc}")

        revisions: dict[str, str] = {}
        for f in proposal.files:
            # Last look right before writing: an edit saved a moment ago still wins.
            if self.artifacts.revision(f.path) != f.base_revision:
                return self._needs_rebase(
                    task_id, patch_id,
                    [ev.Drift(path=f.path, expected=f.base_revision, actual=self.artifacts.revision(f.path))],
                    f"{f.path} changed while the patch was being applied",
                )
            revisions[f.path] = self.artifacts.write(f.path, new_texts.get(f.path, current[f.path][0]))
        events = [new_event("PatchApplied", task_id, author, ev.PatchApplied(patch_id=patch_id, revisions=revisions))]
        for f in proposal.files:
            events.append(
                new_event(
                    "ArtifactChanged", task_id, author,
                    ev.ArtifactChanged(path=f.path, revision=revisions[f.path], previous_revision=f.base_revision, source="apply"),
                )
            )
        self.billboard.append_events(events)
        result = ApplyResult(patch_id=patch_id, status="applied", revisions=revisions)
        if build and any(p.endswith((".tex", ".bib")) for p in revisions):
            result.build = run_build(
                self.workspace, mode=self.config.build_mode, timeout=self.config.build_timeout, patch_id=patch_id
            )
            self.billboard.append_event(new_event("BuildChecked", task_id, "builder", result.build))
        summary = f"applied {patch_id}: {proposal.summary}".strip()
        self.billboard.append_event(new_event("TaskCompleted", task_id, author, ev.TaskCompleted(summary=summary)))
        return result

    def _needs_rebase(self, task_id: str, patch_id: str, drifted: list[ev.Drift], reason: str) -> ApplyResult:
        self.billboard.append_event(
            new_event("TaskNeedsRebase", task_id, "coauthor-apply",
                      ev.TaskNeedsRebase(patch_id=patch_id, drifted=drifted, reason=reason))
        )
        return ApplyResult(patch_id=patch_id, status="needs_rebase", drifted=drifted, reason=reason)

    # -- file changes ------------------------------------------------------------------

    def record_file_change(self, rel: str, *, source: str = "watcher") -> ev.TaskEvent | None:
        """ArtifactChanged when a watched file's revision differs from the
        last one the billboard knows (the apply already recorded its own)."""
        if not is_watched(rel):
            return None
        self.billboard.refresh()
        revision = self.artifacts.revision(rel)
        known = self.billboard.artifact(rel)
        if known is not None and known.revision == revision:
            return None
        if known is None and source == "watcher" and revision == "none":
            return None
        payload = ev.ArtifactChanged(
            path=rel, revision=revision, previous_revision=known.revision if known else None, source=source  # type: ignore[arg-type]
        )
        return self.billboard.append_event(new_event("ArtifactChanged", None, self.config.user_id, payload))

    def scan_files(self) -> int:
        """Record every watched file whose revision the log does not know yet
        (edits made while no watcher ran)."""
        changed = 0
        for rel in self.artifacts.list_files():
            if self.record_file_change(rel, source="scan"):
                changed += 1
        return changed


def _normalize_diff(diff: str, file_patches: list[FilePatch]) -> str:
    """Keep only the diff body (from the first file header on), with a/ b/
    labels, so the stored diff applies with ``patch -p1`` whatever the input."""
    out: list[str] = []
    for fp in file_patches:
        out.append("--- /dev/null\n" if fp.creates else f"--- a/{fp.path}\n")
        out.append("+++ /dev/null\n" if fp.deletes else f"+++ b/{fp.path}\n")
        for h in fp.hunks:
            out.append(f"@@ -{h.old_start},{h.old_len} +{h.new_start},{h.new_len} @@\n")
            for tag, text in h.lines:
                if text.endswith("\n"):
                    out.append(tag + text)
                else:
                    out.append(tag + text + "\n\\ No newline at end of file\n")
    return "".join(out)
