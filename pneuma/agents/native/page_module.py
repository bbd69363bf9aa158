"""The native backend's part of the page: the browser clients it drives, the
picker that asks which one a task uses, and the selected client's tabs, as
one ES module (``static/browser-clients.js``). The backend's routes serve it
at ``URL``; ``BackendSpec.browser_module`` names it, so the shell imports it
without naming any backend (pneuma/web/lib/backend-ui.js)."""

from __future__ import annotations

from pathlib import Path

URL = "/backends/native/browser-clients.js"
FILE = Path(__file__).with_name("static") / "browser-clients.js"
