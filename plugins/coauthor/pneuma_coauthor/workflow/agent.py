"""The Default CoAuthor Agent (docs/design/coauthor.md, "Workflow") and the AgentHost that schedules it
(docs/design/coauthor.md, "Agent host").

claim → context → drift check → plan (reasoning) → patch (writer) →
awaiting_review; feedback, a rejection or a needed rebase hands the task
back and the same steps run again. The agent only appends events and reads
files: it never writes a paper file (accept_patch does, after the person).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pneuma_coauthor.domain import events as ev
from pneuma_coauthor.domain.events import new_event
from pneuma_coauthor.domain.model import TaskStatus, TaskView
from pneuma_coauthor.domain.patches import make_diff
from pneuma_coauthor.domain.state import InvalidTransition
from pneuma_coauthor.llm import (
    CANDIDATES_TOOL,
    EDITS_TOOL,
    PLAN_TOOL,
    GatewayLLM,
    LLMError,
)
from pneuma_coauthor.policies import SchedulerPolicy
from pneuma_coauthor.workflow.context import (
    GLOBAL_DOCS,
    ContextPackage,
    build_context,
    figure_questions,
)
from pneuma_coauthor.workflow.usecases import CoAuthor, UseCaseError

SYSTEM = """You are CoAuthor, the co-author of a LaTeX paper. The person is the principal investigator: they bring the facts and decide every change.
Rules you never break:
- Never invent a fact: what a figure or result shows, a number, a citation, a venue rule. Facts come only from BRIEF.md, the cited sources or the person's words in the thread. If the task needs a fact you do not have, ask it as a blocking question.
- OUTLINE.md is the contract for structure; BRIEF.md holds the facts; STYLE.md the voice. Follow them.
- Change only what the task asks. One sentence per line in LaTeX. Keep every \\label, \\ref and \\cite valid.
"""

PLAN_INSTRUCTIONS = """Post your plan with the post_plan tool: goal, issues, strategy, scope (files and line ranges), risks, blocking questions, and the files the patch will change.
If the request is only a question about the paper, set patchNeeded to false and answer it in `answer`."""

PATCH_INSTRUCTIONS = """Write the patch for the plan below with the propose_edits tool.
Each edit replaces lines lineStart..lineEnd (inclusive, numbered as in the focus) of one file with `replacement`.
Edits to the same file must not overlap. To create a new file use lineStart 1 and lineEnd 0.
<plan>
{plan}
</plan>"""

TWEAK_INSTRUCTIONS = """Offer exactly {n} alternative rewrites of the lines marked > in the focus, with the offer_candidates tool.
Each replacement replaces all of those lines; the alternatives should differ in a way the person can choose between."""

Observer = Callable[[str, str, str], None]  # (task_id, kind, text): kind is "stage" or a delta kind


class WorkflowError(RuntimeError):
    """The agent cannot go on; recorded as TaskFailed (the task is blocked)."""


@dataclass
class Edit:
    path: str
    line_start: int
    line_end: int
    replacement: str


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Replace line ranges, bottom-up so earlier edits keep their numbers."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
        trailing_newline = False
    else:
        trailing_newline = True
    previous_start = len(lines) + 1
    for e in sorted(edits, key=lambda e: e.line_start, reverse=True):
        if e.line_start < 1 or e.line_end < e.line_start - 1 or e.line_end > len(lines):
            raise WorkflowError(f"edit {e.path}:{e.line_start}-{e.line_end} is outside the file ({len(lines)} lines)")
        if e.line_end >= previous_start:
            raise WorkflowError(f"edits to {e.path} overlap at line {e.line_end}")
        new = e.replacement
        if new and not new.endswith("\n"):
            new += "\n"
        lines[e.line_start - 1 : e.line_end] = new.splitlines(keepends=True)
        previous_start = e.line_start
    out = "".join(lines)
    if not trailing_newline and out.endswith("\n"):
        out = out[:-1]
    return out


class DefaultCoAuthorAgent:
    def __init__(self, app: CoAuthor, llm: GatewayLLM, agent_id: str = "coauthor", observer: Observer | None = None):
        self.app = app
        self.llm = llm
        self.agent_id = agent_id
        self.observer = observer

    def _say(self, task_id: str, kind: str, text: str) -> None:
        if self.observer is not None:
            self.observer(task_id, kind, text)

    def _append(self, kind: str, task_id: str, payload: ev.Payload) -> ev.TaskEvent:
        return self.app.billboard.append_event(new_event(kind, task_id, self.agent_id, payload))

    async def run(self, task_id: str) -> None:
        """One turn of the workflow on a task whose move it is."""
        try:
            await self._run(task_id)
        except asyncio.CancelledError:
            raise
        except (WorkflowError, LLMError, UseCaseError) as exc:
            self._fail(task_id, str(exc))
        except InvalidTransition as exc:
            # Someone else moved the task meanwhile (canceled, answered): stop quietly.
            self._say(task_id, "stage", f"stopped: {exc}")

    def _fail(self, task_id: str, reason: str) -> None:
        view = self.app.billboard.get_task(task_id)
        if view is not None and not view.status.final:
            with contextlib.suppress(InvalidTransition):
                self._append("TaskFailed", task_id, ev.TaskFailed(reason=reason))

    async def _run(self, task_id: str) -> None:
        view = self.app.task(task_id)
        store = self.app.artifacts
        # 1. Claim: snapshot the revisions of everything the task will read.
        if view.status in (TaskStatus.OPEN,) or (view.status is TaskStatus.BLOCKED and view.claimed_at is None):
            paths = [r.path for r in view.artifact_refs] + [d for d in GLOBAL_DOCS if store.exists(d)]
            base = {p: store.revision(p) for p in dict.fromkeys(paths)}
            self._append("TaskClaimed", task_id, ev.TaskClaimed(base_revisions=base))
            self._append("TaskStarted", task_id, ev.TaskStarted())
        elif view.status is not TaskStatus.IN_PROGRESS:
            self._append("TaskStarted", task_id, ev.TaskStarted())
        view = self.app.task(task_id)

        # 2. Context, 3. drift check against the claimed (or last rebased) revisions.
        context = build_context(view, store, self.app.billboard.get_thread(task_id))
        drifted = [
            ev.Drift(path=p, expected=rev, actual=store.revision(p))
            for p, rev in view.base_revisions.items()
            if store.revision(p) != rev
        ]
        if drifted or view.needs_rebase:
            names = ", ".join(d.path for d in drifted) or "the patch's files"
            reason = f"{names} changed since the task read them; working from the latest version (auto-rebase)"
            self._append(
                "TaskRebased", task_id,
                ev.TaskRebased(base_revisions={d.path: d.actual for d in drifted}, drifted=drifted, reason=reason),
            )
            context.rebase_note = reason + ". The person's edits stand: build on them, never revert them."
            self._say(task_id, "stage", reason)

        # 4. Plan with the reasoning profile.
        plan = await self._plan(view, context)
        if plan.questions or not plan.patch_needed:
            self._append("AgentPlanPosted", task_id, plan)
            if not plan.questions:
                self._append("TaskCompleted", task_id, ev.TaskCompleted(summary=plan.answer or plan.goal))
            return
        self._append("AgentPlanPosted", task_id, plan)

        # 5. Patch with the writer profile (or n alternatives with fast).
        extra = [p for p in plan.files if p not in {f.path for f in context.focus}]
        if extra:
            context = build_context(self.app.task(task_id), store, self.app.billboard.get_thread(task_id), extra)
        supersedes = _latest_unapplied(view)
        n = int(view.intent_data.get("n", 1) or 1)
        if n > 1 and any(f.explicit for f in context.focus):
            await self._candidates(task_id, context, n, supersedes)
        else:
            await self._patch(task_id, context, plan, supersedes)

    async def _plan(self, view: TaskView, context: ContextPackage) -> ev.AgentPlanPosted:
        answered = any(
            e.type == "UserFeedbackPosted" for e in (self.app.billboard.get_thread(view.task_id) or _Empty()).events
        )
        guard = figure_questions(context, answered)
        self._say(view.task_id, "stage", f"planning with reasoning ({self.llm.profile('reasoning').model})")
        result = await self._call(view.task_id, "reasoning", "plan", context.render() + "\n\n" + PLAN_INSTRUCTIONS, PLAN_TOOL)
        data = result.input
        try:
            plan = ev.AgentPlanPosted(
                goal=str(data.get("goal") or view.intent),
                issues=_strings(data.get("issues")),
                strategy=_strings(data.get("strategy")),
                scope=_strings(data.get("scope")),
                risks=_strings(data.get("risks")),
                questions=_strings(data.get("questions")),
                files=[p for p in _strings(data.get("files")) if _safe(p)],
                patch_needed=bool(data.get("patchNeeded", True)),
                answer=data.get("answer") or None,
            )
        except ValueError as exc:
            raise WorkflowError(f"the plan was malformed: {exc}") from exc
        # The deterministic figure rule wins over the model: a figure nobody
        # described blocks the task even if the model was ready to write.
        for question in guard:
            if question not in plan.questions:
                plan.questions.append(question)
        if context.missing and any(m in ("BRIEF.md", "STYLE.md") for m in context.missing):
            plan.risks.append(
                "No " + " or ".join(m for m in context.missing if m != "OUTLINE.md")
                + " in the workspace: facts and voice come only from the text and your messages. Creating it helps every later task."
            )
        return plan

    async def _patch(self, task_id: str, context: ContextPackage, plan: ev.AgentPlanPosted, supersedes: str | None) -> None:
        self._say(task_id, "stage", f"writing the patch with writer ({self.llm.profile('writer').model})")
        plan_text = plan.model_dump_json(by_alias=True, exclude_none=True)
        prompt = context.render() + "\n\n" + PATCH_INSTRUCTIONS.format(plan=plan_text)
        result = await self._call(task_id, "writer", "patch", prompt, EDITS_TOOL)
        edits = [
            Edit(str(e["path"]), int(e["lineStart"]), int(e["lineEnd"]), str(e.get("replacement", "")))
            for e in result.input.get("edits", [])
            if isinstance(e, dict) and _safe(str(e.get("path", "")))
        ]
        if not edits:
            raise WorkflowError("the writer proposed no edit; say more precisely what to change (/followup)")
        diff, bases = self._diff(context, edits)
        self.app.propose_patch(
            task_id, diff, author=self.agent_id, summary=str(result.input.get("summary", "")),
            supersedes=supersedes, base_revisions=bases,
        )

    async def _candidates(self, task_id: str, context: ContextPackage, n: int, supersedes: str | None) -> None:
        focus = next(f for f in context.focus if f.explicit)
        self._say(task_id, "stage", f"writing {n} alternatives with fast ({self.llm.profile('fast').model})")
        prompt = context.render() + "\n\n" + TWEAK_INSTRUCTIONS.format(n=n)
        result = await self._call(task_id, "fast", "candidates", prompt, CANDIDATES_TOOL)
        candidates = [c for c in result.input.get("candidates", []) if isinstance(c, dict)][:n]
        if not candidates:
            raise WorkflowError("no alternative was produced")
        for index, cand in enumerate(candidates, 1):
            edit = Edit(focus.path, focus.line_start, focus.line_end, str(cand.get("replacement", "")))
            diff, bases = self._diff(context, [edit])
            if not diff:
                continue
            self.app.propose_patch(
                task_id, diff, author=self.agent_id, summary=f"alternative {index}: {cand.get('summary', '')}",
                candidate=index, supersedes=supersedes if index == 1 else None, base_revisions=bases,
            )

    def _diff(self, context: ContextPackage, edits: list[Edit]) -> tuple[str, dict[str, str]]:
        by_path: dict[str, list[Edit]] = {}
        for e in edits:
            by_path.setdefault(e.path, []).append(e)
        parts, bases = [], {}
        for path, file_edits in by_path.items():
            focus = context.focus_for(path)
            if focus is not None:
                old, revision = focus.text, focus.revision
            else:
                doc = context.docs.get(path)
                if doc is not None:
                    old, revision = doc.text, doc.revision
                else:
                    text, revision = self.app.artifacts.read(path)
                    old = text
            new = apply_edits(old or "", file_edits)
            diff = make_diff(path, old, new)
            if diff:
                parts.append(diff)
                bases[path] = revision
        if not parts:
            raise WorkflowError("the proposed edits change nothing")
        return "".join(parts), bases

    async def _call(self, task_id: str, profile: str, purpose: str, prompt: str, tool: dict[str, Any]):
        def on_delta(kind: str, chunk: str) -> None:
            self._say(task_id, kind, chunk)

        try:
            result = await self.llm.call_tool(profile, purpose, SYSTEM, prompt, tool, on_delta)
        except LLMError as exc:
            if exc.trace is not None:
                self._append("LlmCallTraced", task_id, exc.trace)
            raise
        self._append("LlmCallTraced", task_id, result.trace)
        return result


class _Empty:
    events: list = []


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [str(v) for v in value if str(v).strip()]


def _safe(path: str) -> bool:
    return bool(path) and not path.startswith("/") and ".." not in path.split("/") and not path.startswith(".pneuma")


def _latest_unapplied(view: TaskView) -> str | None:
    stale = [p for p in view.proposals.values() if p.state in ("rejected", "needs_rebase", "superseded")]
    return stale[-1].patch_id if stale else None


class AgentHost:
    """Runs agents on the tasks the scheduler picks, as the billboard changes."""

    def __init__(self, app: CoAuthor, agents: dict[str, DefaultCoAuthorAgent], scheduler: SchedulerPolicy | None = None):
        self.app = app
        self.agents = agents
        self.scheduler = scheduler or SchedulerPolicy()
        self.running: dict[str, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()

    def _schedule(self) -> list[asyncio.Task[None]]:
        started = []
        views = self.app.billboard.query_tasks()
        for agent_id, agent in self.agents.items():
            mine = {t for t in self.running if (self.app.billboard.get_task(t) or _NoTask()).assigned_to == agent_id}
            for task_id in self.scheduler.select(views, agent_id, mine):
                job = asyncio.create_task(agent.run(task_id), name=f"coauthor-{task_id}")
                self.running[task_id] = job
                job.add_done_callback(lambda _j, t=task_id: self._done(t))
                started.append(job)
        return started

    def _done(self, task_id: str) -> None:
        self.running.pop(task_id, None)
        self._wake.set()

    def cancel_if_running(self, task_id: str) -> bool:
        job = self.running.get(task_id)
        if job is None:
            return False
        job.cancel()
        return True

    async def run_until_idle(self) -> None:
        """Run until no task is runnable and nothing is running (CLI `agent run --once`)."""
        while True:
            self.app.billboard.refresh()
            self._schedule()
            if not self.running:
                return
            await asyncio.wait(list(self.running.values()))

    async def run_forever(self) -> None:
        watcher = asyncio.create_task(self._watch_views())
        try:
            while True:
                self._schedule()
                await self._wake.wait()
                self._wake.clear()
        finally:
            watcher.cancel()
            for job in list(self.running.values()):
                job.cancel()

    async def _watch_views(self) -> None:
        async for view in self.app.billboard.subscribe_task_views():
            if view.status is TaskStatus.CANCELED:
                self.cancel_if_running(view.task_id)  # /cancel stops an agent mid-step
            self._wake.set()


class _NoTask:
    assigned_to = None
