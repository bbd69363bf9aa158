"""The browser checks (mount, actions, selection, annotate, edit, exports,
a11y): the mode served over a scratch workspace, one Chromium page on it,
every check in turn on that one page (docs/mode-authors.md, "Check a mode")."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from pneuma.mode_check.browser_session import CheckSession, check_session
from pneuma.mode_check.report import CheckResult
from pneuma.mode_check.target import ModeTarget, expose_folder

PageCheck = Callable[[CheckSession], Awaitable[CheckResult]]


def page_checks() -> dict[str, PageCheck]:
    from pneuma.mode_check.a11y_check import check_a11y
    from pneuma.mode_check.contract_checks import check_actions, check_selection
    from pneuma.mode_check.review_checks import check_annotate, check_edit

    # In this order on the one page: the actions last, as they may move the
    # viewer elsewhere (a preview, another file).
    return {"selection": check_selection, "annotate": check_annotate, "edit": check_edit,
            "a11y": check_a11y, "actions": check_actions}


CHECK_LIMIT_S = 30.0  # one check on the page (an action may take its whole timeout)


def run_browser_checks(target: ModeTarget, names: list[str], timeout: float) -> list[CheckResult]:
    results: list[CheckResult] = []
    # The `actions` check calls every agent-invocable action: one that installs
    # with pip (the mode-maker's install-mode) must not change the environment
    # from a check. pip reads its options from PIP_* variables; this process
    # and its children are the check's only.
    os.environ["PIP_DRY_RUN"] = "1"
    with tempfile.TemporaryDirectory(prefix="pneuma-mode-check-") as scratch:
        if target.plugin_module is not None:
            expose_folder(target, Path(scratch) / "site")
        why = f"not finished: the checks took longer than {timeout:.0f} s"
        try:
            asyncio.run(asyncio.wait_for(_run(target, names, Path(scratch), results), timeout))
        except TimeoutError:
            pass
        except Exception as exc:  # no Chromium, no Playwright, a mode that cannot be served
            why = f"not run: the mode could not be served in a browser ({str(exc).splitlines()[0]})"
    done = {result.check for result in results}
    results += [CheckResult(name, False, why) for name in names if name not in done]
    order = {name: i for i, name in enumerate(names)}
    return sorted(results, key=lambda r: order.get(r.check, 99))


async def _run(target: ModeTarget, names: list[str], scratch: Path, results: list[CheckResult]) -> None:
    """Each check's result is appended as it ends: a check still running
    when the time is up leaves the others' results standing."""
    from pneuma.host.registry import get_mode
    from pneuma.mode_check.contract_checks import check_mount

    mode = get_mode(target.name)
    checks = page_checks()
    async with check_session(mode, timeout_s=15.0) as checked:
        mount = await check_mount(checked)
        if "mount" in names:
            results.append(mount)
        for name, check in checks.items():
            if name in names:
                results.append(await run_one(name, check, checked, mount.ok))
        if "exports" in names:
            from pneuma.mode_check.exports_check import check_exports

            out = scratch / "exports"
            out.mkdir()
            results.append(await check_exports(mode.name, checked.workspace, out))


async def run_one(name: str, check: PageCheck, checked: CheckSession, mounted: bool) -> CheckResult:
    if not mounted:
        return CheckResult(name, False, "not run: the viewer did not mount")
    try:
        return await asyncio.wait_for(check(checked), CHECK_LIMIT_S)
    except TimeoutError:
        return CheckResult(name, False, f"not finished within {CHECK_LIMIT_S:.0f} s")
    except Exception as exc:  # the page or the viewer broke the check: its finding
        return CheckResult(name, False, f"the check could not finish: {str(exc).splitlines()[0]}")
