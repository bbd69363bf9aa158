"""The viewer contract in a real page (docs/viewer-contract.md): `mount`,
`actions`, `selection`, `annotate` and `edit`."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import urlsplit

from pneuma.host.manifest import ViewerAction
from pneuma.mode_check import page_scripts as js
from pneuma.mode_check.browser_session import (
    ACTION_TIMEOUT_S,
    CONNECTED,
    MOUNTED,
    CheckSession,
)
from pneuma.mode_check.report import CheckResult

MOUNT_TIMEOUT_MS = 15_000
SETTLE_MS = 3_000
CONTEXT = re.compile(r"^<viewer-context\b[^>]*>[\s\S]*</viewer-context>$")
EXAMPLE = re.compile(r"\be\.g\.,?\s+[\"'“]?([^\s\"'”,;()]+)")
SAMPLE_NUMBER = 1
LOCATION = re.compile(r"\((https?://[^)\s]+)\)$")


async def check_mount(checked: CheckSession) -> CheckResult:
    page = checked.page
    try:
        await page.wait_for_selector(CONNECTED, timeout=MOUNT_TIMEOUT_MS)
        await page.wait_for_function(MOUNTED, timeout=MOUNT_TIMEOUT_MS)
    except Exception as exc:
        return CheckResult("mount", False, f"the viewer did not mount within {MOUNT_TIMEOUT_MS // 1000} s "
                           f"({str(exc).splitlines()[0]})", {"console": checked.console_errors})
    try:  # a viewer that reads its files after mount shows them once the requests go quiet
        await page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
    except Exception:
        pass  # an engine that keeps a connection open never goes quiet: checked as it is
    state = await page.evaluate(js.STATE)
    if state["loadError"]:
        return CheckResult("mount", False, f"the viewer failed to load: {state['loadError']}",
                           {"console": checked.console_errors})
    own = [error for error in checked.console_errors if own_error(error, checked.mode.name)]
    if own:
        return CheckResult("mount", False, f"the page reported errors while mounting: {own[0]}",
                           {"console": checked.console_errors})
    return CheckResult("mount", True, f"the viewer mounted over {len(state['files'])} file(s), "
                       "no console errors", {"capabilities": state["capabilities"]})


def own_error(error: str, mode: str) -> bool:
    """Whether a console error is the shell's or the viewer's own: said by
    the shell's page, its modules (/static/) or the mode's (/modes/<mode>/).
    What the workspace's content or an engine in a frame of its own says
    (an optional library it cannot find, a missing picture) is the content's
    business, kept in the details but not a failure of the mode."""
    where = LOCATION.search(error)
    if where is None:
        return True
    path = urlsplit(where.group(1)).path
    return path in ("", "/") or path.startswith(("/static/", f"/modes/{mode}/"))


def sample_value(name: str, kind: str, description: str, files: list[str]) -> Any:
    """A value for a required parameter: the description's example (e.g. …),
    a workspace file for a file-like one, else a plain value of its type."""
    if kind == "number":
        return SAMPLE_NUMBER
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    example = EXAMPLE.search(description)
    if re.search(r"file|path", name, re.I) and files:
        suffix = example.group(1).rpartition(".")[2] if example and "." in example.group(1) else None
        same = [f for f in files if suffix and f.endswith("." + suffix)]
        return (same or files)[0]
    return example.group(1).rstrip(".") if example else "1"


def sample_params(action: ViewerAction, files: list[str]) -> dict[str, Any]:
    return {name: sample_value(name, spec.type, spec.description, files)
            for name, spec in action.params.items() if spec.required}


async def check_actions(checked: CheckSession) -> CheckResult:
    actions = [a for a in checked.mode.manifest.viewer_api.actions if a.agent_invocable]
    if not actions:
        return CheckResult("actions", True, "the manifest declares no agent-invocable action")
    page = checked.page
    if not await page.evaluate(js.RECORD_VIEWER):
        return CheckResult("actions", False, "the mounted viewer has no runAction(actionId, params)",
                           {"actions": [a.id for a in actions]})
    files = (await page.evaluate(js.STATE))["files"]
    problems: list[str] = []
    answers: dict[str, Any] = {}
    for action in actions:
        params = sample_params(action, files)
        problem, answer = await call_action(checked, action.id, params)
        answers[action.id] = {"params": params, "answer": answer}
        if problem:
            problems.append(f"{action.id}: {problem}")
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return CheckResult("actions", False, problems[0] + more, {"problems": problems, "answers": answers})
    return CheckResult("actions", True, f"{len(actions)} action(s) answered within {ACTION_TIMEOUT_S:.0f} s "
                       "with {success, …}", {"answers": answers})


async def call_action(checked: CheckSession, action_id: str, params: dict[str, Any]) -> tuple[str | None, Any]:
    """(the problem or None, the answer) of one action called as the agent calls it."""
    try:
        status, answer = await checked.post("/api/viewer/action", {"actionId": action_id, "params": params},
                                            ACTION_TIMEOUT_S + 5)
    except (TimeoutError, asyncio.TimeoutError):
        return f"no answer within {ACTION_TIMEOUT_S:.0f} s", None
    seen = (await checked.page.evaluate(js.SEEN) or {}).get("actions", {}).get(action_id)
    if status == 504 or (isinstance(answer, dict) and answer.get("error", {}).get("code") == "E_TIMEOUT"):
        return f"no answer within {ACTION_TIMEOUT_S:.0f} s", answer
    if status >= 400:
        message = answer.get("error", {}).get("message") if isinstance(answer, dict) else None
        return f"the server refused it ({status}: {message or 'no message'})", answer
    if seen is None:
        return "the viewer's runAction was never called", answer
    if "threw" in seen:
        return f"the viewer's runAction threw: {seen['threw']}", answer
    if seen["shape"] not in ("result", "none"):
        return f"the viewer answered a{'n' if seen['shape'][0] in 'aeiou' else ''} {seen['shape']}, " \
               "not {success: true|false, message?, data?}", answer
    return None, answer


def sample_selection(files: list[str]) -> dict[str, Any]:
    path = files[0] if files else ""
    return {"file": path, "path": path, "text": "mode check", "label": "mode check"}


def sent_user_messages(checked: CheckSession, start: int) -> list[dict[str, Any]]:
    found = []
    for frame in checked.sent_frames[start:]:
        for line in frame.split("\n"):
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("type") == "user_message":
                found.append(message)
    return found


async def check_selection(checked: CheckSession) -> CheckResult:
    page = checked.page
    files = (await page.evaluate(js.STATE))["files"]
    errors, frames = len(checked.console_errors), len(checked.sent_frames)
    selection = sample_selection(files)
    await page.evaluate(js.SET_SELECTION, selection)
    # What the composer's Enter does (the box itself may be disabled: no agent is running).
    await page.evaluate(js.SEND_MESSAGE, "What is selected?")
    messages: list[dict[str, Any]] = []
    for _ in range(50):
        messages = sent_user_messages(checked, frames)
        if messages:
            break
        await asyncio.sleep(0.1)
    if not messages:
        return CheckResult("selection", False, "the page sent no message after a selection was set")
    context = str(messages[-1].get("viewer_context") or "")
    new_errors = checked.errors_since(errors)
    if new_errors:
        return CheckResult("selection", False, f"setting a selection reported an error: {new_errors[0]}",
                           {"selection": selection, "console": new_errors})
    if not CONTEXT.match(context.strip()):
        return CheckResult("selection", False, "the message carried no <viewer-context>…</viewer-context> "
                           f"for the selection (got {context[:80]!r})", {"selection": selection})
    return CheckResult("selection", True, f"a selection reached the message as {' '.join(context.split())[:70]}…",
                       {"selection": selection, "viewer_context": context})
