"""The mode-maker's check after every turn (docs/checks.md): the package the
agent is building still passes the checks that need no browser.

``pneuma mode check`` in full starts a Chromium and a server (several
seconds), too slow for every turn; the checks run here (the manifest
validates, the code imports only ``pneuma.api``, every locale has every
string) take well under a second. The full check is the page's Check
button and the ``run-check`` action.
"""

from __future__ import annotations

from pneuma.api import CheckRequest, Problem, TurnCheck

FAST_CHECKS = ("manifest", "imports", "locales")
PACKAGE_SUFFIXES = (".py", ".json", ".js", ".toml", ".md")


def package_still_checks(request: CheckRequest) -> list[Problem]:
    if not request.changed_with_suffix(*PACKAGE_SUFFIXES):
        return []
    from pneuma.api import ToolError, check_mode

    try:
        # check_mode gives its child process 15 s beyond its own timeout.
        report = check_mode(request.workspace, only=FAST_CHECKS, timeout=max(2.0, request.budget_s - 16.0))
    except ToolError as exc:
        return [Problem(f"the package cannot be checked: {exc.message}")]
    return [Problem(f"{result.check}: {result.message}") for result in report.results if not result.ok]


CHECKS = [TurnCheck(mode="mode-maker", name="package",
                    label={"en": "The mode passes its quick checks", "zh-CN": "模式通过快速检查"},
                    run=package_still_checks)]
