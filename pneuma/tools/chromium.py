"""The headless Chromium that Pneuma's parts start (slide export, the
``browser_action`` and preview tools, the native agent's browser client):
Debian's binary, with one set of flags.

No sandbox: `pneuma run` often runs as root in a container, where
Chromium's sandbox refuses to start. No background networking, component
updates, sync or QUIC: on a machine without outside network those would
only be refused connections, retried at every start.
"""

from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
