"""`pneuma mode check`: a mode checked against the viewer contract before it
runs next to the person's work (docs/mode-authors.md, "Check a mode").

``check_mode`` (exported by ``pneuma.api``) runs the checks in a child
process and returns a ``ModeCheckReport``. The checks needing no browser
(``manifest``, ``imports``, ``locales``) read the package's files; the
others load the mode in real Chromium against a scratch workspace served by
the one Pneuma server (browser_run.py).
"""

from __future__ import annotations

from pneuma.mode_check.report import CheckResult, ModeCheckReport
from pneuma.mode_check.run import CHECKS, check_mode

__all__ = ["CHECKS", "CheckResult", "ModeCheckReport", "check_mode"]
