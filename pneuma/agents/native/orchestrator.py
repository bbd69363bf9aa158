"""``AgentOrchestrator``: one person's message through to a finished task.

For each message: a task is created; if it names a web page (a URL) it is
a browser task and goes through client selection and the person's
confirmation before the page is opened and prepared (loaded → screenshot +
readable text); then the model runs in a loop, calling tools, until it ends
its turn. Browser tools the model calls in a task that was not a browser
task go through the same selection and confirmation first.

Rules kept here (docs/design/native-runtime.md, "Serial actions"):

1. one browser action at a time per session (``ActionScheduler``);
2. every action is observed: ack + result, or a timeout / an offline client
   ends the task in ``error``;
3. the model never analyses a page that was not prepared: after opening,
   clicking or submitting, the page is prepared and the result (or the
   explicit reason it failed) is what the model gets back.

Everything the web UI needs is emitted through the session sink: the chat
as ``stream_event``/``assistant``/``tool_result``/``result``, plus
``task_update``, ``browser_selection``, ``browser_action``,
``page_prepared``, and (from the backend) ``extension_update`` and
``twin_update``. Confirmations use the shell's ``confirmation_request``.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.api import (
    BrowserRequestTimeout,
    GatewayError,
    LLMGateway,
    NoBrowserConnected,
)

from .artifacts import ArtifactService
from .clients import ExtensionRegistry
from .config import NativeConfig
from .scheduler import ActionError, ActionScheduler, ActionUnobservable
from .state import Task, TaskStatus, new_task_id
from .store import SessionStore
from .tools import (
    ToolDef,
    result_text,
    run_mode_tool,
    run_viewer_action,
    run_workspace_tool,
)

log = logging.getLogger(__name__)

URL_PATTERN = re.compile(r"https?://[^\s<>\"'`)\]]+", re.IGNORECASE)
VIEWER_CONTEXT = re.compile(r"<viewer-context\b[^>]*>.*?</viewer-context>\s*", re.DOTALL)
MAX_SCREENSHOT_FOR_MODEL = 3_500_000  # bytes; bigger screenshots go by URL only
S = TaskStatus


class TaskFailed(RuntimeError):
    """Ends the task in ``error`` with this message (shown in the chat)."""

    def __init__(self, message: str, code: str = "task_failed"):
        super().__init__(message)
        self.code = code


class BrowserDeclined(RuntimeError):
    pass


class NotABrowser(ValueError):
    """``select_client`` was given a viewer tab, which cannot run browser actions."""


@dataclass
class TurnStats:
    started: float = field(default_factory=time.monotonic)
    model_calls: int = 0
    cost: float = 0.0
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})
    final_text: str = ""


class AgentOrchestrator:
    def __init__(
        self,
        *,
        session_id: str,
        mode: Any,
        workspace: Path,
        config: NativeConfig,
        store: SessionStore,
        registry: ExtensionRegistry,
        scheduler: ActionScheduler,
        artifacts: ArtifactService,
        gateway: LLMGateway,
        emit: Callable[[dict[str, Any]], None],
        tools: list[ToolDef],
        system_prompt: Callable[[], str],
        viewer_actions: Any = None,
        confirmations: Any = None,
        api_url: str | None = None,
        api_token: str | None = None,
        credentials_problem: Callable[[], str | None] = lambda: None,
        twin: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        self.session_id = session_id
        self.mode = mode
        self.workspace = workspace
        self.config = config
        self.store = store
        self.registry = registry
        self.scheduler = scheduler
        self.artifacts = artifacts
        self.gateway = gateway
        self.emit = emit
        self.tools = {t.name: t for t in tools}
        self.system_prompt = system_prompt
        self.viewer_actions = viewer_actions
        self.confirmations = confirmations
        self.api_url = api_url
        self.api_token = api_token
        self.credentials_problem = credentials_problem
        self.twin = twin
        self.current: Task | None = None
        self.reserved_task_id: str | None = None
        self._selection: asyncio.Future[str] | None = None
        self._declined: set[str] = set()  # tasks whose browser actions the person refused

    # -- tasks -----------------------------------------------------------------

    def reserve_task_id(self) -> str:
        """``GET /api/task/id``: the id the next message's task will get."""
        if self.reserved_task_id is None:
            self.reserved_task_id = new_task_id()
        return self.reserved_task_id

    def tasks(self) -> list[dict[str, Any]]:
        return [t.to_json() for t in self.store.tasks(self.session_id)]

    def _move(self, task: Task, status: TaskStatus, error: str | None = None) -> None:
        if task.status == status:
            return
        task.move(status, error=error)
        self.store.save_task(task)
        self.emit({"type": "task_update", "task": task.to_json()})

    def _new_task(self, text: str) -> Task:
        task_id = self.reserved_task_id or new_task_id()
        self.reserved_task_id = None
        title = " ".join(person_text(text).split())[:80] or "(image)"
        task = Task(id=task_id, session_id=self.session_id, title=title,
                    selected_client_id=self.registry.selected(self.session_id))
        self.store.save_task(task)
        self.emit({"type": "task_update", "task": task.to_json()})
        return task

    # -- one message -------------------------------------------------------------

    async def handle_message(self, text: str, images: list[dict[str, str]]) -> None:
        task = self._new_task(text)
        self.current = task
        stats = TurnStats()
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for image in images:
            content.append({"type": "image", "source": {"type": "base64",
                            "media_type": image["media_type"], "data": image["data"]}})
        problem = self.credentials_problem()
        if problem:
            self.store.add_message(self.session_id, task.id, "user", content)
            self._fail(task, stats, TaskFailed(problem, "no_api_key"))
            return
        try:
            # A URL the person wrote, not one inside the viewer's context.
            urls = URL_PATTERN.findall(person_text(text))
            if urls:
                url = urls[0].rstrip(".,;:!?")
                page_blocks = await self._open_for_task(task, url, text)
                content += page_blocks
            else:
                self._move(task, S.RUNNING)
            self.store.add_message(self.session_id, task.id, "user", content)
            await self._model_loop(task, stats)
        except asyncio.CancelledError:
            self._finish_interrupted(task, stats)
            raise
        except TaskFailed as exc:
            self._fail(task, stats, exc)
            return
        except ActionUnobservable as exc:
            self._fail(task, stats, TaskFailed(str(exc), exc.code))
            return
        except GatewayError as exc:
            self._keep_cut_answer(task, exc)
            self._fail(task, stats, TaskFailed(str(exc), exc.kind))
            return
        except Exception as exc:  # a bug must end the task visibly, not hang it
            log.exception("the native agent failed")
            self._fail(task, stats, TaskFailed(f"internal error: {exc}", "internal"))
            return
        finally:
            self._selection = None
        self._move(task, S.COMPLETED)
        self._result(stats, is_error=False, subtype="success")

    async def _open_for_task(self, task: Task, url: str, text: str) -> list[dict[str, Any]]:
        """A browser task's fixed start: client, confirmation, open, prepare."""
        try:
            client_id = await self._ensure_browser(
                task, f"Open {url} in your browser and work on: "
                f"{' '.join(person_text(text).split())[:300]}",
                {"url": url, "actions": ["session_start", "browser_wait_for_loaded",
                                         "browser_screenshot", "browser_readability_extract"]})
        except BrowserDeclined as exc:
            self._move(task, S.RUNNING)
            return [{"type": "text", "text": f"[Pneuma: {exc} Do not use browser tools in this "
                     "task; answer from what you know and say so.]"}]
        self._move(task, S.RUNNING)
        blocks = self._page_blocks(await self._open_page(task, client_id, url))
        blocks[0]["text"] = f"[Pneuma opened {url} in the person's browser for this task.]\n" + blocks[0]["text"]
        return blocks

    async def _open_page(self, task: Task, client_id: str, url: str) -> dict[str, Any]:
        """Open ``url`` in the task's tab (the person's tab group of this
        mode), remember the tab for the task's next actions and prepare the page."""
        opened = await self._action(task, client_id, "session_start",
                                    {"url": url, "reuseExistingTab": True,
                                     "groupTitle": f"Pneuma {self.mode.name}"})
        if isinstance(opened, dict) and isinstance(opened.get("tabId"), int):
            task.tab_id = opened["tabId"]
            self.store.save_task(task)
        return await self._prepare_page(task, client_id)

    # -- the model loop ----------------------------------------------------------

    async def _model_loop(self, task: Task, stats: TurnStats) -> None:
        tool_defs = [t.api() for t in self.tools.values()]
        for _ in range(self.config.max_turns):
            messages = self._conversation()
            context: dict[str, Any] = {"system": self.system_prompt()}
            client_id = task.selected_client_id
            if client_id and self.twin is not None and self.registry.is_online(client_id):
                context["twin"] = _twin_summary(self.twin(client_id))
            done: dict[str, Any] | None = None
            tool_calls: list[dict[str, Any]] = []
            async for event in self.gateway.stream_chat(messages, tool_defs, context,
                                                        settings=self.config.llm_settings()):
                kind = event["type"]
                if kind == "stream_event":
                    self.emit({"type": "stream_event", "event": event["event"],
                               "parent_tool_use_id": None})
                elif kind == "tool_call":
                    tool_calls.append(event)
                elif kind == "retry":
                    self.emit({"type": "error", "code": "api_retry",
                               "message": f"The model API answered {event['status'] or 'nothing'} "
                               f"({event['message']}); retrying in {event['delay']:.1f} s "
                               f"(attempt {event['attempt']} of {event['max_retries']})."})
                elif kind == "done":
                    done = event
            if done is None:
                raise GatewayError("the model's stream ended without a message")
            message = done["message"]
            stats.model_calls += 1
            stats.cost += done["cost_usd"]
            for key in ("input_tokens", "output_tokens"):
                stats.usage[key] = stats.usage.get(key, 0) + int(done["usage"].get(key) or 0)
            self.store.record_usage(self.session_id, task.id, message.get("model") or self.config.model,
                                    int(done["usage"].get("input_tokens") or 0),
                                    int(done["usage"].get("output_tokens") or 0), done["cost_usd"])
            content = message.get("content") or []
            self.emit({"type": "assistant", "message": {
                "id": message.get("id") or f"msg_native_{time.time_ns()}", "type": "message",
                "role": "assistant", "model": message.get("model"), "content": content,
                "stop_reason": message.get("stop_reason")}, "parent_tool_use_id": None})
            self.store.add_message(self.session_id, task.id, "assistant", content)
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text").strip()
            if text:
                stats.final_text = text
            uses = [b for b in content if b.get("type") == "tool_use"]
            if not uses:
                return
            # The gateway parsed each call's arguments; a call whose JSON was
            # broken is answered with that, never run with empty arguments.
            broken = {c["toolCallId"]: c["input_error"] for c in tool_calls if c.get("input_error")}
            results = []
            for block in uses:
                results.append(await self._run_tool(task, block, broken.get(block.get("id"))))
            self.store.add_message(self.session_id, task.id, "user", results)
        raise TaskFailed(f"the task took more than {self.config.max_turns} model calls; stopped",
                         "max_turns")

    def _conversation(self) -> list[dict[str, Any]]:
        return normalise_conversation(self.store.messages(self.session_id),
                                      self.config.history_limit)

    # -- tools -------------------------------------------------------------------

    async def _run_tool(self, task: Task, block: dict[str, Any],
                        input_error: str | None = None) -> dict[str, Any]:
        tool_id = block.get("id")
        name = block.get("name") or ""
        args = block.get("input") if isinstance(block.get("input"), dict) else {}
        tool = self.tools.get(name)
        shown: Any
        model_content: Any
        if input_error is not None:
            shown = model_content = (f"{name} was not run: its arguments were not valid JSON "
                                     f"({input_error}); call it again with a JSON object")
            is_error = True
        elif tool is None:
            shown = model_content = f"there is no tool named {name!r}"
            is_error = True
        elif tool.kind == "browser":
            try:
                model_content, shown, is_error = await self._browser_tool(task, tool, args)
            except BrowserDeclined as exc:
                shown = model_content = str(exc)
                is_error = True
        elif tool.kind == "viewer":
            value, is_error = await run_viewer_action(self.viewer_actions, tool.target, args,
                                                      self.config.action_timeout)
            shown = model_content = result_text(value)
        elif tool.kind == "mode":
            value, is_error = await run_mode_tool(self.mode, self.workspace, tool.target, args,
                                                  self.api_url, self.api_token)
            shown = model_content = result_text(value)
        else:
            value, is_error = await asyncio.to_thread(run_workspace_tool, self.workspace, name, args)
            shown = model_content = result_text(value)
        self.emit({"type": "tool_result", "tool_use_id": tool_id, "content": shown,
                   "is_error": is_error, "parent_tool_use_id": None})
        return {"type": "tool_result", "tool_use_id": tool_id, "content": model_content,
                "is_error": is_error}

    async def _browser_tool(self, task: Task, tool: ToolDef,
                            args: dict[str, Any]) -> tuple[Any, str, bool]:
        summary = {
            "browser_open": f"Open {args.get('url')} in your browser",
            "browser_click": "Click on a page in your browser",
            "browser_type": "Type into a page in your browser",
        }.get(tool.name, f"Run {tool.name} in your browser")
        client_id = await self._ensure_browser(task, summary, {"tool": tool.name, "input": args})
        if task.status != S.RUNNING:
            self._move(task, S.RUNNING)
        try:
            if tool.name == "browser_open":
                url = args.get("url")
                if not isinstance(url, str) or not URL_PATTERN.match(url):
                    return "browser_open needs an http(s) URL", "bad url", True
                return self._page_result(await self._open_page(task, client_id, url))
            if task.tab_id is None:
                return ("no page is open in this task yet: call browser_open first",
                        "no page open", True)
            if tool.name == "browser_close":
                value = await self._action(task, client_id, "session_stop", {"closeTab": True})
                task.tab_id = None
                self.store.save_task(task)
                return result_text(value), result_text(value), False
            if tool.name == "browser_read_page":
                return self._page_result(await self._prepare_page(task, client_id))
            params = {"tabId": task.tab_id, **{k: v for k, v in args.items() if v is not None}}
            value = await self._action(task, client_id, tool.target, params)
            if tool.name == "browser_click" or (tool.name == "browser_type" and args.get("submit")):
                page = await self._prepare_page(task, client_id)
                content, shown, _ = self._page_result(page)
                note = f"{tool.name} done: {result_text(value)}\n"
                content[0]["text"] = note + content[0]["text"]
                return content, note + shown, False
            if tool.name == "browser_get_html" and isinstance(value, dict):
                value = dict(value)
                html = self.artifacts.read(value.get("artifactId", "")) if value.get("artifactId") else None
                if html is not None:
                    value["htmlStart"] = html[:8000].decode("utf-8", "replace")
            text = result_text(value)
            return text, text, False
        except ActionUnobservable:
            raise
        except ActionError as exc:
            text = f"{tool.name} failed ({exc.code}): {exc}"
            return text, text, True

    # -- browser ---------------------------------------------------------------

    async def _ensure_browser(self, task: Task, summary: str, details: dict[str, Any]) -> str:
        """The task's client, selected and confirmed; waits for the person."""
        client_id = task.selected_client_id or self.registry.selected(self.session_id)
        if client_id and not self.registry.is_online(client_id):
            self.emit({"type": "error", "code": "client_offline",
                       "message": f"The browser client {self._client_name(client_id)} is offline; "
                       "pick another one or reconnect it."})
            self.emit({"type": "browser_selection", "taskId": task.id, "status": "offline",
                       "clientId": client_id, "candidates": self.registry.candidates()})
            client_id = None
        if not client_id:
            client_id = await self._wait_for_selection(task)
        task.selected_client_id = client_id
        self.store.save_task(task)
        if task.id in self._declined:
            raise BrowserDeclined("The person declined browser actions for this task.")
        if not task.confirmed:
            self._move(task, S.WAITING_FOR_USER_CONFIRMATION)
            await self._confirm(task, client_id, summary, details)
        return client_id

    async def _wait_for_selection(self, task: Task) -> str:
        self._move(task, S.WAITING_FOR_BROWSER_SELECTION)
        self._selection = asyncio.get_running_loop().create_future()
        self.emit({"type": "browser_selection", "taskId": task.id, "status": "waiting",
                   "candidates": self.registry.candidates()})
        try:
            client_id = await asyncio.wait_for(self._selection, self.config.selection_timeout)
        except asyncio.TimeoutError:
            raise TaskFailed(f"no browser client was selected within "
                             f"{self.config.selection_timeout:g} s", "selection_timeout") from None
        finally:
            self._selection = None
        return client_id

    def select_client(self, client_id: str) -> dict[str, Any]:
        """The person picked a client (``POST /api/extension/select``)."""
        info = self.registry.get(client_id)
        if info is None:
            raise KeyError(client_id)
        if info.kind != "browser":
            raise NotABrowser(f"{info.name or client_id} is a Pneuma viewer tab, not a browser "
                             "client; it cannot carry out browser actions")
        if not info.online:
            raise ValueError(f"the browser client {info.name or client_id} is offline")
        self.registry.bind(self.session_id, client_id)
        self.store.set_selected_client(self.session_id, client_id)
        task = self.current
        if task is not None and task.status not in (S.COMPLETED, S.ERROR):
            task.selected_client_id = client_id
            self.store.save_task(task)
        self.emit({"type": "browser_selection", "taskId": task.id if task else None,
                   "status": "selected", "clientId": client_id,
                   "candidates": self.registry.candidates()})
        if self._selection is not None and not self._selection.done():
            self._selection.set_result(client_id)
        return info.to_json()

    async def _confirm(self, task: Task, client_id: str, summary: str,
                       details: dict[str, Any]) -> None:
        if self.confirmations is None:
            raise TaskFailed("browser actions need the person's confirmation, and no Pneuma "
                             "page is there to ask", "no_confirmation")
        try:
            approved, message = await self.confirmations.request(
                "browser_task", summary,
                {"taskId": task.id, "clientId": client_id,
                 "client": self._client_name(client_id), **details},
                timeout=self.config.confirmation_timeout)
        except NoBrowserConnected as exc:
            raise TaskFailed(f"cannot ask for confirmation: {exc}", "no_confirmation") from None
        except BrowserRequestTimeout:
            raise TaskFailed("nobody confirmed the browser task in time",
                             "confirmation_timeout") from None
        if not approved:
            self._declined.add(task.id)
            self._move(task, S.RUNNING)
            raise BrowserDeclined("The person declined the browser task"
                                  + (f": {message}." if message else "."))
        task.confirmed = True
        self.store.save_task(task)

    def _client_name(self, client_id: str) -> str:
        info = self.registry.get(client_id)
        return (info.name if info and info.name else client_id)

    async def _action(self, task: Task, client_id: str, name: str, params: dict[str, Any],
                      timeout: float | None = None) -> Any:
        return await self.scheduler.run(self.session_id, client_id, name, params,
                                        task_id=task.id, timeout=timeout)

    async def _prepare_page(self, task: Task, client_id: str) -> dict[str, Any]:
        """loaded → screenshot + readable text; each failure is named, never skipped."""
        page: dict[str, Any] = {"tabId": task.tab_id, "failures": []}
        tab = {"tabId": task.tab_id}
        steps = [
            ("browser_wait_for_loaded", {**tab, "timeoutMs": int(self.config.action_timeout * 500)}),
            ("browser_screenshot", {**tab, "fullPage": False}),
            ("browser_readability_extract", tab),
        ]
        for name, params in steps:
            try:
                value = await self._action(task, client_id, name, params)
            except ActionUnobservable:
                raise
            except ActionError as exc:
                page["failures"].append({"action": name, "code": exc.code, "message": str(exc)})
                continue
            if not isinstance(value, dict):
                continue
            if name == "browser_screenshot":
                page["screenshot"] = {k: value.get(k) for k in ("artifactId", "url", "width", "height")}
            elif name == "browser_readability_extract":
                page["title"] = value.get("title")
                page["url"] = value.get("url") or page.get("url")
                page["text"] = value.get("text") or ""
                if value.get("artifactId"):
                    page["textArtifact"] = value["artifactId"]
                    full = self.artifacts.read(value["artifactId"])
                    if full is not None:
                        page["text"] = full.decode("utf-8", "replace")
            elif name == "browser_wait_for_loaded":
                page["url"] = value.get("url")
                page["loadStatus"] = value.get("status")
        if not page.get("text") and not page.get("screenshot") and not page["failures"]:
            page["failures"].append({"action": "page_preparation", "code": "empty",
                                     "message": "the page gave neither a screenshot nor text"})
        event = {"type": "page_prepared", "taskId": task.id,
                 "page": {k: v for k, v in page.items() if k != "text"}}
        event["page"]["textLength"] = len(page.get("text") or "")
        event["page"]["textStart"] = (page.get("text") or "")[:500]
        self.emit(event)
        return page

    def _page_blocks(self, page: dict[str, Any]) -> list[dict[str, Any]]:
        text = page.get("text") or ""
        limit = self.config.page_text_limit
        if len(text) > limit:
            text = text[:limit] + f"\n[… {len(page['text']) - limit} more characters cut]"
        lines = [f"Page prepared: {page.get('title') or '(no title)'} — {page.get('url') or '?'}"]
        if page.get("screenshot"):
            shot = page["screenshot"]
            lines.append(f"Screenshot: {shot.get('url')} ({shot.get('width')}×{shot.get('height')})")
        for failure in page.get("failures", []):
            lines.append(f"Preparation step {failure['action']} failed: {failure['message']}")
        lines.append("Readable text of the page:\n" + (text or "(none)"))
        blocks: list[dict[str, Any]] = [{"type": "text", "text": "\n".join(lines)}]
        shot_id = (page.get("screenshot") or {}).get("artifactId")
        if shot_id:
            data = self.artifacts.read(shot_id)
            if data is not None and len(data) <= MAX_SCREENSHOT_FOR_MODEL:
                blocks.append({"type": "image", "source": {
                    "type": "base64", "media_type": "image/png",
                    "data": base64.b64encode(data).decode("ascii")}})
        return blocks

    def _page_result(self, page: dict[str, Any]) -> tuple[list[dict[str, Any]], str, bool]:
        blocks = self._page_blocks(page)
        shown = blocks[0]["text"]
        if len(shown) > 4000:
            shown = shown[:4000] + "\n[…]"
        failed = not page.get("text") and not page.get("screenshot")
        return blocks, shown, failed

    # -- endings -----------------------------------------------------------------

    def _result(self, stats: TurnStats, *, is_error: bool, subtype: str,
                result: str | None = None) -> None:
        self.emit({"type": "result", "data": {
            "subtype": subtype, "is_error": is_error,
            "duration_ms": int((time.monotonic() - stats.started) * 1000),
            "num_turns": stats.model_calls, "total_cost_usd": round(stats.cost, 6),
            "result": result if result is not None else stats.final_text, "usage": stats.usage}})
        self.emit({"type": "status_change", "status": "idle"})

    def _keep_cut_answer(self, task: Task, exc: GatewayError) -> None:
        """The text that streamed before the stream broke off is kept, for
        the page and the model alike, marked as cut: never as a finished answer."""
        if not exc.partial_text.strip():
            return
        content = [{"type": "text", "text": f"{exc.partial_text}\n\n[Pneuma: the model's answer was "
                    f"cut off here: {exc}]"}]
        self.emit({"type": "assistant", "message": {
            "id": f"msg_native_{time.time_ns()}", "type": "message", "role": "assistant",
            "model": self.config.model, "content": content, "stop_reason": None},
            "parent_tool_use_id": None})
        self.store.add_message(self.session_id, task.id, "assistant", content)

    def _mark_unanswered(self, task: Task, why: str) -> None:
        """A message left without an answer gets one saying why, so the
        person's next message stays its own and the model knows this one
        failed or was interrupted (roles must alternate; without this the
        two would be merged into one)."""
        stored = self.store.messages(self.session_id)
        if stored and stored[-1]["role"] == "user":
            self.store.add_message(self.session_id, task.id, "assistant",
                                   [{"type": "text", "text": f"[Pneuma: {why}]"}])

    def _fail(self, task: Task, stats: TurnStats, exc: TaskFailed) -> None:
        self.emit({"type": "error", "code": exc.code, "message": str(exc)})
        try:
            self._mark_unanswered(task, f"this message failed before an answer: {exc}")
        except Exception:
            log.exception("could not mark task %s's message as failed", task.id)
        try:
            self._move(task, S.ERROR, str(exc))
        except Exception:
            log.exception("could not move task %s to error", task.id)
        self._result(stats, is_error=True, subtype="error", result=str(exc))

    def _finish_interrupted(self, task: Task, stats: TurnStats) -> None:
        if self._selection is not None and not self._selection.done():
            self._selection.cancel()
        try:
            self._mark_unanswered(task, "the person interrupted this message before an answer")
        except Exception:
            log.exception("could not mark task %s's message as interrupted", task.id)
        try:
            self._move(task, S.ONGOING)
        except Exception:
            log.exception("could not move task %s to ongoing", task.id)
        self._result(stats, is_error=False, subtype="interrupted", result="interrupted")

    def resume_after_restart(self) -> list[Task]:
        """Tasks a previous run left mid-way end in error, saying why; the
        list and the conversation carry on."""
        tasks = self.store.tasks(self.session_id)
        for task in tasks:
            if task.status in (S.CREATED, S.RUNNING, S.WAITING_FOR_BROWSER_SELECTION,
                               S.WAITING_FOR_USER_CONFIRMATION):
                was = task.status.value
                task.move(S.ERROR, error=f"Pneuma stopped while this task was {was}")
                self.store.save_task(task)
        selected = self.store.selected_client(self.session_id)
        if selected:
            self.registry.bindings[self.session_id] = selected
        return tasks


def person_text(text: str) -> str:
    """The person's own words: the message without the viewer's
    ``<viewer-context>`` prefix (kept for the model, not for titles,
    confirmations or finding the page to open)."""
    return VIEWER_CONTEXT.sub("", text).strip()


def normalise_conversation(messages: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """What the Messages API accepts: alternating roles, each tool_use
    answered, starting with a user turn, at most ``limit`` messages."""
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if not blocks:
            continue
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"] = out[-1]["content"] + blocks
        else:
            out.append({"role": message["role"], "content": blocks})
    # Every tool_use must be answered by the next user message.
    fixed: list[dict[str, Any]] = []
    for i, message in enumerate(out):
        fixed.append(message)
        if message["role"] != "assistant":
            continue
        uses = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        if not uses:
            continue
        following = out[i + 1] if i + 1 < len(out) else None
        answered = {b.get("tool_use_id") for b in (following or {}).get("content", [])
                    if b.get("type") == "tool_result"}
        missing = [{"type": "tool_result", "tool_use_id": u, "is_error": True,
                    "content": "interrupted before this tool ran"} for u in uses if u not in answered]
        if missing:
            if following is not None and following["role"] == "user":
                following["content"] = missing + following["content"]
            else:
                fixed.append({"role": "user", "content": missing})
    if len(fixed) > limit:
        fixed = fixed[-limit:]
    while fixed and (fixed[0]["role"] != "user" or any(
            b.get("type") == "tool_result" for b in fixed[0]["content"])):
        fixed.pop(0)
    return fixed


def _twin_summary(twin: dict[str, Any]) -> dict[str, Any]:
    return {"activeTabId": twin.get("activeTabId"),
            "tabs": [{k: t.get(k) for k in ("id", "url", "title", "groupId")}
                     for t in twin.get("tabs", [])][:30]}
