"""``pneuma coauthor``: the REPL, and subcommands for scripts and for the agent.

Every subcommand is a thin adapter over one use case (workflow/usecases.py);
nothing here decides anything about tasks or patches.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import click

from pneuma_coauthor.domain.model import ArtifactRef, Priority


class Ctx:
    def __init__(self, workspace: Path, actor: str | None) -> None:
        self.workspace = workspace
        self.actor = actor
        self._app = None

    @property
    def app(self):  # noqa: ANN201 - CoAuthor, imported lazily to keep `pneuma --help` fast
        if self._app is None:
            from pneuma_coauthor.workflow.usecases import CoAuthor

            self._app = CoAuthor(self.workspace)
        return self._app


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def _use_case(fn):  # noqa: ANN001, ANN202
    """A command that runs a use case: it is handed the Ctx, and use-case
    errors become one clear line and exit status 1."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        from pneuma_coauthor.domain.state import InvalidTransition
        from pneuma_coauthor.policies import RoutingError
        from pneuma_coauthor.workflow.usecases import UseCaseError

        try:
            return fn(*args, **kwargs)
        except (UseCaseError, InvalidTransition, RoutingError, ValueError) as exc:
            _fail(str(exc))

    return click.pass_obj(wrapper)


@click.group(name="coauthor", invoke_without_command=True)
@click.option("--workspace", "-w", type=click.Path(file_okay=False, path_type=Path), default=".", show_default=True,
              help="The paper's workspace.")
@click.option("--actor", default=None, help="Who acts (default: the user from coauthor.toml; agents pass their id).")
@click.pass_context
def coauthor(ctx: click.Context, workspace: Path, actor: str | None) -> None:
    """CoAuthor: co-write a LaTeX paper task by task. Without a subcommand, the REPL."""
    workspace.mkdir(parents=True, exist_ok=True)
    ctx.obj = Ctx(workspace.resolve(), actor)
    if ctx.invoked_subcommand is None:
        from pneuma_coauthor.repl import run_repl

        run_repl(workspace.resolve())


# -- tasks -------------------------------------------------------------------------


@coauthor.group()
def task() -> None:
    """Create, list and steer tasks."""


@task.command("create")
@click.argument("title", nargs=-1, required=True)
@click.option("--file", "files", multiple=True, metavar="PATH[:START-END]", help="A file (and lines) the task is about.")
@click.option("--priority", type=click.Choice([p.value for p in Priority]), default="foreground", show_default=True)
@click.option("--agent", default=None, help="Assign to this agent instead of the default one.")
@click.option("--n", "n", type=int, default=None, help="Ask for N alternatives (like /tweak --n).")
@_use_case
def task_create(obj: Ctx, title: tuple[str, ...], files: tuple[str, ...], priority: str, agent: str | None, n: int | None) -> None:
    """Create a task; its id is printed on the last line."""
    refs = [ArtifactRef.parse(f) for f in files]
    data = {"command": "tweak", "n": n} if n else {}
    view = obj.app.create_task(" ".join(title), author=obj.actor, refs=refs, priority=Priority(priority),
                               intent_data=data, assigned_to=agent)
    click.echo(f"created {view.task_id} ({view.status.value}, assigned to {view.assigned_to})")
    click.echo(view.task_id)


@task.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include done and canceled tasks.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def task_list(obj: Ctx, show_all: bool, as_json: bool) -> None:
    """Tasks that wait on someone (blocked and awaiting review first)."""
    from pneuma_coauthor.render import task_line

    views = obj.app.billboard.query_tasks()
    if not show_all:
        views = [v for v in views if not v.status.final]
    order = {"blocked": 0, "awaiting_review": 1, "in_progress": 2, "claimed": 3, "open": 4, "done": 5, "canceled": 6}
    views.sort(key=lambda v: (order[v.status.value], v.task_id))
    if as_json:
        click.echo(json.dumps([v.dump() for v in views], ensure_ascii=False, indent=2))
        return
    if not views:
        click.echo("no tasks" if show_all else "no open tasks")
    for v in views:
        click.echo(task_line(v))


@task.command("show")
@click.argument("task_id")
@_use_case
def task_show(obj: Ctx, task_id: str) -> None:
    """A task's state as JSON (status, plan, proposals, base revisions)."""
    click.echo(json.dumps(obj.app.task(task_id).dump(), ensure_ascii=False, indent=2))


@task.command("feedback")
@click.argument("task_id")
@click.argument("text", nargs=-1, required=True)
@click.option("--answer", is_flag=True, help="The text answers the plan's blocking questions.")
@_use_case
def task_feedback(obj: Ctx, task_id: str, text: tuple[str, ...], answer: bool) -> None:
    """Follow up on a task (the agent re-plans)."""
    obj.app.post_feedback(task_id, " ".join(text), author=obj.actor, kind="answer" if answer else "followup")
    click.echo(f"feedback posted on {task_id}")


@task.command("cancel")
@click.argument("task_id")
@click.argument("reason", nargs=-1)
@_use_case
def task_cancel(obj: Ctx, task_id: str, reason: tuple[str, ...]) -> None:
    obj.app.cancel(task_id, " ".join(reason), author=obj.actor)
    click.echo(f"canceled {task_id}")


@task.command("claim")
@click.argument("task_id")
@_use_case
def task_claim(obj: Ctx, task_id: str) -> None:
    """Claim and start a task as an agent: records the base revisions of its files and OUTLINE/BRIEF/STYLE."""
    from pneuma_coauthor.domain import events as ev
    from pneuma_coauthor.domain.events import new_event
    from pneuma_coauthor.workflow.context import GLOBAL_DOCS

    app = obj.app
    view = app.task(task_id)
    actor = obj.actor or view.assigned_to or "coauthor"
    paths = [r.path for r in view.artifact_refs] + [d for d in GLOBAL_DOCS if app.artifacts.exists(d)]
    base = {p: app.artifacts.revision(p) for p in dict.fromkeys(paths)}
    app.billboard.append_events([
        new_event("TaskClaimed", task_id, actor, ev.TaskClaimed(base_revisions=base)),
        new_event("TaskStarted", task_id, actor, ev.TaskStarted()),
    ])
    for path, rev in base.items():
        click.echo(f"{path} {rev}")
    click.echo(f"claimed {task_id}")


@task.command("plan")
@click.argument("task_id")
@_use_case
def task_plan(obj: Ctx, task_id: str) -> None:
    """Post a plan as an agent: JSON on stdin with goal, issues, strategy, scope, risks, questions."""
    from pneuma_coauthor.domain import events as ev
    from pneuma_coauthor.domain.events import new_event

    data = json.loads(sys.stdin.read() or "{}")
    view = obj.app.task(task_id)
    plan = ev.AgentPlanPosted.model_validate(data)
    obj.app.billboard.append_event(new_event("AgentPlanPosted", task_id, obj.actor or view.assigned_to or "coauthor", plan))
    click.echo(f"plan posted on {task_id}" + (" (blocked: questions asked)" if plan.questions else ""))


@task.command("complete")
@click.argument("task_id")
@click.argument("summary", nargs=-1)
@_use_case
def task_complete(obj: Ctx, task_id: str, summary: tuple[str, ...]) -> None:
    view = obj.app.task(task_id)
    obj.app.complete(task_id, " ".join(summary), author=obj.actor or view.assigned_to)
    click.echo(f"completed {task_id}")


# -- patches -------------------------------------------------------------------------


@coauthor.group()
def patch() -> None:
    """Propose, review and apply patches."""


@patch.command("propose")
@click.argument("task_id")
@click.argument("path")
@click.option("--summary", default="", help="One line: what the patch changes and why.")
@click.option("--supersedes", default=None)
@_use_case
def patch_propose(obj: Ctx, task_id: str, path: str, summary: str, supersedes: str | None) -> None:
    """Propose the unified diff on stdin for PATH; prints the proposal id last.

    The diff may carry the `# coauthor-patch 1` header of the skill's patch
    files; its patchId, summary and supersedes are then used.
    """
    diff = sys.stdin.read()
    header = _patch_header(diff)
    if header.get("taskId") and header["taskId"] != task_id:
        _fail(f"the patch header is for {header['taskId']}, not {task_id}")
    stored = obj.app.propose_patch(
        task_id, diff, author=obj.actor, default_path=path,
        summary=summary or header.get("summary", ""), supersedes=supersedes or header.get("supersedes"),
        patch_id=header.get("patchId"),
    )
    p = stored.payload
    click.echo(f"proposed {p.patch_id} on {task_id}: {p.summary}")  # type: ignore[attr-defined]
    click.echo(p.patch_id)  # type: ignore[attr-defined]


def _patch_header(diff: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in diff.splitlines():
        if line.startswith("---"):
            break
        if line.startswith("# ") and ":" in line:
            key, _, value = line[2:].partition(":")
            if key.strip() in ("patchId", "taskId", "summary", "supersedes"):
                out[key.strip()] = value.strip()
    return out


@patch.command("accept")
@click.argument("task_id")
@click.argument("proposal", default="latest")
@click.option("--no-build", is_flag=True, help="Skip latexmk after applying.")
@_use_case
def patch_accept(obj: Ctx, task_id: str, proposal: str, no_build: bool) -> None:
    """Accept a proposal and apply it (only if its files are still at their base revision)."""
    result = obj.app.accept_patch(task_id, proposal, author=obj.actor, build=not no_build)
    if result.status == "applied":
        for path, rev in result.revisions.items():
            click.echo(f"applied {path} {rev}")
        if result.build is not None:
            click.echo(f"build {result.build.status}" + (f": {result.build.detail}" if result.build.detail else ""))
        click.echo(f"{result.patch_id} applied; {task_id} done")
    else:
        for d in result.drifted:
            click.echo(f"drift {d.path} expected {d.expected} actual {d.actual}")
        click.echo(f"{result.patch_id} NOT applied: {result.reason}; rebase requested")
        sys.exit(2)


@patch.command("reject")
@click.argument("task_id")
@click.argument("proposal", default="latest")
@click.argument("reason", nargs=-1)
@_use_case
def patch_reject(obj: Ctx, task_id: str, proposal: str, reason: tuple[str, ...]) -> None:
    patch_id = obj.app.reject_patch(task_id, proposal, " ".join(reason), author=obj.actor)
    click.echo(f"rejected {patch_id}")


@patch.command("show")
@click.argument("task_id")
@click.argument("proposal", default="latest")
@_use_case
def patch_show(obj: Ctx, task_id: str, proposal: str) -> None:
    app = obj.app
    patch_id = app.resolve_patch(app.task(task_id), proposal)
    click.echo(app.proposal_event(task_id, patch_id).diff, nl=False)


# -- the log ---------------------------------------------------------------------------


@coauthor.group()
def log() -> None:
    """Read the event log."""


@log.command("replay")
@click.argument("task_id", required=False)
@click.option("--until", default=None, help="Stop at this seq number or ISO timestamp.")
@click.pass_obj
def log_replay(obj: Ctx, task_id: str | None, until: str | None) -> None:
    """Every event (of one task), one per line, its type first."""
    from pneuma_coauthor.render import event_line

    until_seq = int(until) if until and until.isdigit() else None
    until_time = until if until and not until.isdigit() else None
    for event in obj.app.billboard.store.read(0, task_id=task_id, until_seq=until_seq, until_time=until_time):
        click.echo(event_line(event))


@log.command("export")
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--task", "task_id", default=None)
@click.pass_obj
def log_export(obj: Ctx, path: Path | None, task_id: str | None) -> None:
    """Write the log as JSONL (default .pneuma/coauthor/events.jsonl)."""
    from pneuma_coauthor.billboard import billboard_dir

    target = path or billboard_dir(obj.workspace) / "events.jsonl"
    count = obj.app.billboard.export_jsonl(target, task_id)
    click.echo(f"{count} events -> {target}")


# -- the agent ---------------------------------------------------------------------------


@coauthor.group()
def agent() -> None:
    """Run the default CoAuthor agent without the REPL."""


@agent.command("run")
@click.option("--once", is_flag=True, help="Work until no task is runnable, then exit.")
@click.pass_obj
def agent_run(obj: Ctx, once: bool) -> None:
    """Plan and propose patches for every task whose move is the agent's."""
    from pneuma_coauthor.llm import GatewayLLM
    from pneuma_coauthor.workflow.agent import AgentHost, DefaultCoAuthorAgent

    app = obj.app

    def observe(task_id: str, kind: str, text: str) -> None:
        if kind == "stage":
            click.echo(f"[{task_id}] {text}")

    async def main() -> None:
        llm = GatewayLLM(app.config)
        agents = {a.id: DefaultCoAuthorAgent(app, llm, a.id, observe) for a in app.config.agents()}
        host = AgentHost(app, agents)
        try:
            if once:
                await host.run_until_idle()
                return
            from pneuma_coauthor.watcher import watch_workspace

            follow = asyncio.create_task(app.billboard.follow_other_writers())
            watch = asyncio.create_task(watch_workspace(app))
            try:
                await host.run_forever()
            finally:
                follow.cancel()
                watch.cancel()
                await asyncio.gather(follow, watch, return_exceptions=True)
        finally:
            await llm.close()

    seq = app.billboard.projector.last_seq
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    from pneuma_coauthor.render import event_line

    for event in app.billboard.events(after_seq=seq):
        click.echo(event_line(event))
