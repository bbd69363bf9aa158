"""The browser-protocol socket clients of the host's tests (used by
tests/server/conftest.py, tests/native/conftest.py and tests/test_ws_cli.py).

They are ``pneuma.testing``'s, where a plugin's tests find them too:
``FrameClient`` reads coalesced frames one message at a time, ``WSClient``
(``pneuma.testing.BrowserTab``) is a tab that also checks the seq numbers.
"""

from __future__ import annotations

from pneuma.testing.browser import TIMEOUT, FrameClient
from pneuma.testing.browser import BrowserTab as WSClient

__all__ = ["TIMEOUT", "FrameClient", "WSClient"]
