"""The browser checks (mount, actions, selection, annotate, edit, exports,
a11y): the mode served over a scratch workspace, one Chromium page on it."""

from __future__ import annotations

from pneuma.mode_check.report import CheckResult
from pneuma.mode_check.target import ModeTarget


def run_browser_checks(mode: ModeTarget, names: list[str], timeout: float) -> list[CheckResult]:
    return [CheckResult(name, False, "not available yet in this Pneuma") for name in names]
