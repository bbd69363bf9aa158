"""The REPL (docs/design/coauthor.md, "REPL"):
chat or slash commands in, plans and diffs out as they arrive.

An adapter only: each command creates a task or appends an event through
the use cases, and everything shown comes from the billboard's event stream,
so what a script, the browser or another terminal does shows up here too.
"""

from __future__ import annotations

import asyncio
import importlib
import shlex
import sys
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pneuma_coauthor.domain.events import TaskEvent
from pneuma_coauthor.domain.model import ArtifactRef, Priority, TaskStatus
from pneuma_coauthor.render import event_line, short

HELP = """\
Plain text is /ask. Commands:
  /ask TEXT                       a foreground task for the default agent
  /edit FILE:START-END TEXT       a task about those lines
  /draft OUTLINE-HINT TEXT        draft from an OUTLINE.md entry
  /tweak FILE:START-END GOAL --n 3   N alternatives to choose from
  /tasks                          open tasks (blocked and awaiting review first)
  /open TASK                      attach to a task: its plan, patches and history
  /accept [PATCH]                 apply a proposed patch (default: the attached task's latest)
  /reject [PATCH] [REASON]        reject a patch; the agent plans again
  /followup [TASK] TEXT           more instructions, or answers to blocking questions
  /cancel TASK                    cancel a task (stops the agent if it is working on it)
  /agent [NAME]                   show or switch the default agent
  /log replay [TASK]              the event log, one event per line
  /help, /quit"""


class Repl:
    def __init__(self, workspace: Path, console: Console | None = None) -> None:
        from pneuma_coauthor.config import ensure_config
        from pneuma_coauthor.workflow.usecases import CoAuthor

        ensure_config(workspace)
        self.app = CoAuthor(workspace)
        self.console = console or Console(file=sys.stdout, force_terminal=sys.stdout.isatty(), highlight=False, soft_wrap=True)
        self.current: str | None = None  # the attached task
        self.agent_id = self.app.config.user.default_agent_id or "coauthor"
        self._stream_chars: dict[str, int] = {}
        self.host = None

    # -- output ---------------------------------------------------------------

    def show_event(self, event: TaskEvent) -> None:
        c, p, t = self.console, event.payload, event.type
        tid = event.task_id or "-"
        if t == "TaskCreated":
            c.print(f"[bold cyan]● {tid}[/] created: {short(p.intent, 80)}")  # type: ignore[attr-defined]
        elif t == "AgentPlanPosted":
            self.show_plan(tid, p)
        elif t == "PatchProposed":
            self.show_diff(tid, p.patch_id, p.summary, p.diff)  # type: ignore[attr-defined]
        elif t == "PatchApplied":
            files = ", ".join(p.revisions)  # type: ignore[attr-defined]
            c.print(f"[bold green]✔ {p.patch_id} applied[/] to {files}")  # type: ignore[attr-defined]
        elif t == "TaskNeedsRebase":
            c.print(f"[bold yellow]⚠ {p.patch_id} not applied:[/] {p.reason}. Your edits are kept; the agent rebases.")  # type: ignore[attr-defined]
        elif t == "TaskRebased":
            c.print(f"[yellow]↻ {tid}: {p.reason}[/]")  # type: ignore[attr-defined]
        elif t == "TaskCompleted":
            c.print(f"[bold green]✔ {tid} done:[/] {p.summary}")  # type: ignore[attr-defined]
        elif t == "TaskFailed":
            c.print(f"[bold red]✖ {tid} blocked:[/] {p.reason}  (answer with /followup {tid} ...)")  # type: ignore[attr-defined]
        elif t == "TaskCanceled":
            c.print(f"[dim]✖ {tid} canceled[/]")
        elif t == "BuildChecked":
            style = {"ok": "green", "failed": "red", "skipped": "dim"}[p.status]  # type: ignore[attr-defined]
            c.print(f"[{style}]build {p.status}[/] {p.detail}".rstrip())  # type: ignore[attr-defined]
        elif t == "LlmCallTraced":
            c.print(f"[dim]  {p.profile} · {p.model} · {p.purpose} · {p.input_tokens}+{p.output_tokens} tokens · {p.duration_ms / 1000:.1f}s[/]")  # type: ignore[attr-defined]
        elif t == "ArtifactChanged" and p.source == "watcher":  # type: ignore[attr-defined]
            c.print(f"[dim]✎ {p.path} changed on disk[/]")  # type: ignore[attr-defined]
        elif t == "UserFeedbackPosted":
            c.print(f"[cyan]↳ {tid} feedback:[/] {short(p.text, 80)}")  # type: ignore[attr-defined]
        elif t == "PatchRejected":
            c.print(f"[magenta]✖ {p.patch_id} rejected[/] {p.reason}")  # type: ignore[attr-defined]

    def show_plan(self, task_id: str, p) -> None:  # noqa: ANN001
        body = Text()
        body.append("Goal: ", "bold").append(p.goal + "\n")
        for title, items in (("Issues", p.issues), ("Strategy", p.strategy), ("Scope", p.scope), ("Risks", p.risks)):
            if items:
                body.append(f"{title}:\n", "bold")
                for item in items:
                    body.append(f"  • {item}\n")
        if p.questions:
            body.append("Blocking questions:\n", "bold red")
            for n, q in enumerate(p.questions, 1):
                body.append(f"  {n}. {q}\n", "red")
        if getattr(p, "answer", None):
            body.append("Answer: ", "bold").append(p.answer + "\n")
        title = f"plan · {task_id}" + (" · BLOCKED" if p.questions else "")
        self.console.print(Panel(body, title=title, border_style="red" if p.questions else "blue", expand=False))
        if p.questions:
            self.console.print(f"Answer with [bold]/followup {task_id} ...[/]")

    def show_diff(self, task_id: str, patch_id: str, summary: str, diff: str) -> None:
        self.console.print(f"[bold]patch {patch_id}[/] for {task_id}: {summary}")
        for line in diff.splitlines():
            style = None
            if line.startswith(("+++", "---")):
                style = "bold"
            elif line.startswith("@@"):
                style = "cyan"
            elif line.startswith("+"):
                style = "green"
            elif line.startswith("-"):
                style = "red"
            self.console.print(Text(line, style=style or ""))
        self.console.print(f"Accept with [bold]/accept {patch_id}[/], or [bold]/reject {patch_id} REASON[/]")

    def observe(self, task_id: str, kind: str, text: str) -> None:
        """The agent's progress: stages, and a counter while the model streams."""
        if kind == "stage":
            self._stream_chars[task_id] = 0
            self.console.print(f"[dim]… {task_id}: {text}[/]")
            return
        before = self._stream_chars.get(task_id, 0)
        after = before + len(text)
        self._stream_chars[task_id] = after
        if after // 400 > before // 400:
            self.console.print(f"[dim]  ✎ {after} characters streamed[/]")

    # -- commands -------------------------------------------------------------

    async def handle(self, line: str) -> bool:
        """Run one input line; False means quit."""
        line = line.strip()
        if not line:
            return True
        if not line.startswith("/"):
            line = "/ask " + line
        command, _, rest = line.partition(" ")
        rest = rest.strip()
        from pneuma_coauthor.domain.state import InvalidTransition
        from pneuma_coauthor.policies import RoutingError
        from pneuma_coauthor.workflow.usecases import UseCaseError

        try:
            return await self._dispatch(command.lower(), rest)
        except (UseCaseError, InvalidTransition, RoutingError, ValueError) as exc:
            self.console.print(f"[red]error:[/] {exc}")
            return True

    async def _dispatch(self, command: str, rest: str) -> bool:
        app = self.app
        if command in ("/quit", "/exit"):
            return False
        if command == "/help":
            self.console.print(HELP)
        elif command == "/ask":
            self._create(rest, [], {"command": "ask"})
        elif command == "/edit":
            ref, _, text = rest.partition(" ")
            self._create(text or "edit these lines", [ArtifactRef.parse(ref)], {"command": "edit"})
        elif command == "/draft":
            hint, _, text = rest.partition(" ")
            self._create(f"Draft {hint} from OUTLINE.md. {text}".strip(), [], {"command": "draft", "outlineHint": hint})
        elif command == "/tweak":
            words = shlex.split(rest)
            n = 3
            if "--n" in words:
                i = words.index("--n")
                n = int(words[i + 1])
                del words[i : i + 2]
            if not words:
                raise ValueError("usage: /tweak FILE:START-END GOAL --n 3")
            self._create(" ".join(words[1:]) or "rewrite these lines", [ArtifactRef.parse(words[0])], {"command": "tweak", "n": n})
        elif command == "/tasks":
            self.show_tasks()
        elif command == "/open":
            self.open_task(rest or self.current or "")
        elif command == "/accept":
            task_id, patch_id = self._patch_ref(rest.split(" ")[0] if rest else "")
            self.console.print(f"[dim]applying {patch_id} …[/]")
            result = await asyncio.to_thread(app.accept_patch, task_id, patch_id)
            if result.status != "applied":
                self.console.print(f"[yellow]not applied: {result.reason}[/]")
        elif command == "/reject":
            first, _, reason = rest.partition(" ")
            if first and not _looks_like_patch(first):
                first, reason = "", rest
            task_id, patch_id = self._patch_ref(first)
            app.reject_patch(task_id, patch_id, reason)
        elif command == "/followup":
            first, _, text = rest.partition(" ")
            if app.billboard.get_task(first) is None:
                first, text = self.current or "", rest
            if not first:
                raise ValueError("usage: /followup TASK TEXT (or /open a task first)")
            view = app.task(first)
            kind = "answer" if view.status is TaskStatus.BLOCKED else "followup"
            app.post_feedback(first, text, kind=kind)
        elif command == "/cancel":
            task_id = rest.split(" ")[0] if rest else (self.current or "")
            app.cancel(task_id, "canceled from the REPL")
        elif command == "/agent":
            self.switch_agent(rest)
        elif command == "/log":
            words = rest.split()
            if not words or words[0] != "replay":
                raise ValueError("usage: /log replay [TASK]")
            for event in app.billboard.events(task_id=words[1] if len(words) > 1 else None):
                self.console.print(Text(event_line(event)))
        else:
            self.console.print(f"[red]unknown command {command}[/]; /help lists them")
        return True

    def _create(self, intent: str, refs: list[ArtifactRef], data: dict) -> None:
        if not intent.strip():
            raise ValueError("say what the task is")
        view = self.app.create_task(intent, refs=refs, priority=Priority.FOREGROUND, intent_data=data,
                                    assigned_to=None if self.agent_id == self.app.config.user.default_agent_id else self.agent_id)
        self.current = view.task_id

    def _patch_ref(self, ref: str) -> tuple[str, str]:
        if ref and _looks_like_patch(ref):
            return self.app.find_task_of_patch(ref), ref
        task_id = ref or self.current
        if not task_id:
            raise ValueError("which patch? /accept t-001-p1 (or /open the task first)")
        view = self.app.task(task_id)
        return task_id, self.app.resolve_patch(view, "latest")

    def show_tasks(self) -> None:
        self.app.billboard.refresh()
        views = [v for v in self.app.billboard.query_tasks() if not v.status.final]
        if not views:
            self.console.print("no open tasks")
            return
        order = {"blocked": 0, "awaiting_review": 1, "in_progress": 2, "claimed": 3, "open": 4}
        table = Table(show_header=True, header_style="bold")
        for col in ("task", "status", "intent", "review"):
            table.add_column(col)
        for v in sorted(views, key=lambda v: (order.get(v.status.value, 9), v.task_id)):
            table.add_row(v.task_id, v.status.value, short(v.intent, 50), ",".join(p.patch_id for p in v.pending_proposals()))
        self.console.print(table)

    def open_task(self, task_id: str) -> None:
        view = self.app.task(task_id)
        self.current = task_id
        self.console.print(f"[bold]{task_id}[/] · {view.status.value} · {view.intent}")
        thread = self.app.billboard.get_thread(task_id)
        for event in thread.events if thread else []:
            self.console.print(Text("  " + event_line(event), style="dim"))
        if view.plan is not None:
            from pneuma_coauthor.domain.events import AgentPlanPosted

            self.show_plan(task_id, AgentPlanPosted(**view.plan.model_dump()))
        for proposal in view.pending_proposals():
            p = self.app.proposal_event(task_id, proposal.patch_id)
            self.show_diff(task_id, p.patch_id, p.summary, p.diff)

    def switch_agent(self, name: str) -> None:
        agents = [a.id for a in self.app.config.agents()]
        if not name:
            self.console.print(f"default agent: {self.agent_id} (agents: {', '.join(agents)})")
            return
        if name not in agents:
            raise ValueError(f"no agent {name!r}; agents: {', '.join(agents)} (add one under [agents] in .pneuma/coauthor.toml)")
        self.agent_id = name
        self.console.print(f"new tasks go to {name}")

    # -- the loop ---------------------------------------------------------------

    async def _print_events(self) -> None:
        async for event in self.app.billboard.subscribe_events():
            self.show_event(event)

    async def main(self) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.patch_stdout import patch_stdout

        from pneuma_coauthor.billboard import billboard_dir
        from pneuma_coauthor.llm import GatewayLLM
        from pneuma_coauthor.watcher import watch_workspace
        from pneuma_coauthor.workflow.agent import AgentHost, DefaultCoAuthorAgent

        llm = GatewayLLM(self.app.config)
        agents = {a.id: DefaultCoAuthorAgent(self.app, llm, a.id, self.observe) for a in self.app.config.agents()}
        self.host = AgentHost(self.app, agents)
        history = billboard_dir(self.app.workspace) / "repl-history"
        history.parent.mkdir(parents=True, exist_ok=True)
        session: PromptSession[str] = PromptSession(history=FileHistory(str(history)))
        with patch_stdout(raw=True):
            self.console.print(
                f"[bold]CoAuthor[/] · {self.app.workspace} · {len(self.app.billboard.projector.tasks)} tasks · /help for commands"
            )
            # The SDK (behind the host's gateway) takes seconds to import:
            # do it beside the prompt, not before it.
            background = [
                asyncio.create_task(asyncio.to_thread(importlib.import_module, "anthropic")),
                asyncio.create_task(self._print_events()),
                asyncio.create_task(self.app.billboard.follow_other_writers()),
                asyncio.create_task(watch_workspace(self.app)),
                asyncio.create_task(self.host.run_forever()),
            ]
            try:
                while True:
                    try:
                        line = await session.prompt_async("coauthor> ")
                    except KeyboardInterrupt:
                        continue
                    except EOFError:
                        break
                    if not await self.handle(line):
                        break
            finally:
                for job in background:
                    job.cancel()
                await asyncio.gather(*background, return_exceptions=True)
                await llm.close()
        self.app.close()


def _looks_like_patch(ref: str) -> bool:
    return ref.startswith("t-") and "-p" in ref[2:]


def run_repl(workspace: Path) -> None:
    asyncio.run(Repl(workspace).main())
