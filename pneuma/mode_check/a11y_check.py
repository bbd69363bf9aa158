"""The `a11y` check: axe-core finds no serious or critical violation in the
mounted viewer. axe-core is the shell's pinned copy (pneuma/web/package.json,
placed in pneuma/web/vendor/ by scripts/build-web), the one webcraft's
accessibility check uses too."""

from __future__ import annotations

from pathlib import Path

from pneuma.host.paths import web_dir
from pneuma.mode_check import page_scripts as js
from pneuma.mode_check.browser_session import CheckSession
from pneuma.mode_check.report import CheckResult

SERIOUS = ("serious", "critical")


def axe_source() -> Path:
    return web_dir() / "vendor" / "axe.min.js"


SETTLED = """() => Promise.race([
    Promise.all(document.getAnimations()
        .filter((a) => Number.isFinite(a.effect?.getComputedTiming?.().endTime))
        .map((a) => a.finished.catch(() => null))),
    new Promise((done) => setTimeout(done, 1000)),
])"""


async def check_a11y(checked: CheckSession) -> CheckResult:
    source = axe_source()
    if not source.is_file():
        return CheckResult("a11y", False, f"axe-core is not installed ({source} is missing: run scripts/build-web)")
    page = checked.page
    try:
        # Colours are read as they settle, not half-way through a transition
        # an earlier check started (a switch turned on, a hover): the pointer
        # leaves the page, and finite animations end (at most a second).
        await page.mouse.move(0, 0)
        await page.evaluate(SETTLED)
        await page.evaluate(js.load_axe(source.read_text(encoding="utf-8")))
        violations = await page.evaluate(js.RUN_AXE)
    except Exception as exc:
        return CheckResult("a11y", False, f"axe-core could not run in the page: {str(exc).splitlines()[0]}")
    serious = [v for v in violations if v.get("impact") in SERIOUS]
    if serious:
        first = serious[0]
        more = f" (and {len(serious) - 1} more)" if len(serious) > 1 else ""
        return CheckResult("a11y", False, f"{first['impact']}: {first['help']} ({first['id']}, "
                           f"{first['nodes']} element(s): {', '.join(first['target'])}){more}",
                           {"violations": serious})
    return CheckResult("a11y", True, "axe-core found no serious or critical violation in the viewer"
                       + (f" ({len(violations)} minor)" if violations else ""))
