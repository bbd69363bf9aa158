"""`annotate` and `edit`, run where the viewer declares them in its
``capabilities`` (docs/viewer-contract.md, "Annotate, edit in place, follow
the agent"); a viewer that declares neither passes both, saying so."""

from __future__ import annotations

import asyncio
from typing import Any

from pneuma.mode_check import page_scripts as js
from pneuma.mode_check.browser_session import CheckSession
from pneuma.mode_check.contract_checks import sample_selection
from pneuma.mode_check.report import CheckResult

WAIT_S = 5.0
COMMENT = "Checked by pneuma mode check"


async def wait_for(condition: Any, timeout: float = WAIT_S) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if await condition():
            return True
        await asyncio.sleep(0.1)
    return False


async def declared(checked: CheckSession, capability: str) -> bool:
    state = await checked.page.evaluate(js.STATE)
    return capability in (state.get("capabilities") or [])


async def check_annotate(checked: CheckSession) -> CheckResult:
    if not await declared(checked, "annotate"):
        return CheckResult("annotate", True, "not declared (the viewer's capabilities lack \"annotate\")")
    page = checked.page
    await page.evaluate(js.RECORD_VIEWER)
    errors = len(checked.console_errors)
    await page.locator(".annotate-toggle").click()
    files = (await page.evaluate(js.STATE))["files"]
    await page.evaluate(js.SET_SELECTION, sample_selection(files))
    box = page.locator(".pin-box textarea")
    try:
        await box.fill(COMMENT, timeout=WAIT_S * 1000)
        await page.locator(".pin-box .pin-btn.primary").click(timeout=WAIT_S * 1000)
    except Exception as exc:
        return CheckResult("annotate", False, "a selection made while annotating opened no pin comment "
                           f"box ({str(exc).splitlines()[0]})")

    async def stored() -> bool:
        status, body = await checked.get_json("/api/review/pins")
        return status == 200 and any(p.get("comment") == COMMENT for p in body.get("pins", []))

    if not await wait_for(stored):
        return CheckResult("annotate", False, "the pin was not kept (GET /api/review/pins lacks it)")

    async def shown() -> bool:
        seen = await page.evaluate(js.SEEN) or {}
        return any(entry.get("count") or entry.get("threw") for entry in seen.get("pins", []))

    await wait_for(shown)
    seen_pins = (await page.evaluate(js.SEEN) or {}).get("pins", [])
    threw = [entry["threw"] for entry in seen_pins if "threw" in entry]
    await page.locator(".annotate-toggle").click()
    if threw:
        return CheckResult("annotate", False, f"the viewer's showPins threw: {threw[0]}")
    if checked.errors_since(errors):
        return CheckResult("annotate", False, f"annotating reported an error: {checked.errors_since(errors)[0]}")
    return CheckResult("annotate", True, "a selection became a kept pin" +
                       (" the viewer shows" if seen_pins else ""))


async def check_edit(checked: CheckSession) -> CheckResult:
    if not await declared(checked, "edit"):
        return CheckResult("edit", True, "not declared (the viewer's capabilities lack \"edit\")")
    page = checked.page
    files = (await page.evaluate(js.STATE))["files"]
    if not files:
        return CheckResult("edit", False, "the seeded workspace has no text file the viewer shows")
    path = files[0]
    base = await page.evaluate(js.FILE_TEXT, path)
    content = base.rstrip("\n") + "\n\n" if base.strip() else base + "\n"
    errors = len(checked.console_errors)
    answer = await page.evaluate(js.EDIT_FILE, {"path": path, "content": content, "base": base})
    if not (isinstance(answer, dict) and answer.get("ok")):
        return CheckResult("edit", False, f"ctx.editFile({path!r}) was refused: {answer}")
    on_disk = (checked.workspace / path).read_text(encoding="utf-8")
    if on_disk != content:
        return CheckResult("edit", False, f"the edit of {path} did not reach the file on disk")

    async def shown() -> bool:
        return bool(await page.evaluate(js.FILE_TEXT, path) == content)

    if not await wait_for(shown):
        return CheckResult("edit", False, f"the viewer was not given the edited {path}")
    if checked.errors_since(errors):
        return CheckResult("edit", False, f"showing the edited file reported an error: "
                           f"{checked.errors_since(errors)[0]}")
    return CheckResult("edit", True, f"an edit of {path} through ctx.editFile reached the disk and the viewer")
