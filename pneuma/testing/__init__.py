"""Testing a Pneuma mode or backend with the real parts: ``pneuma.testing``.

Like ``pneuma.api`` this is a promised interface (docs/api.md, "Testing a
mode"): everything here keeps working under the same semver rules. It is
for tests only; nothing in the host imports it.

    from pneuma.testing import call_tool, make_workspace, serve, tool_context

- ``load_mode(name)``, ``make_workspace(mode, path, params)`` (as ``pneuma
  init``), ``install_skill(mode, workspace)`` (as ``pneuma run`` at start);
- ``tool_context(mode, workspace)``: the real ``ToolContext`` a handler gets;
  ``call_tool(mode, workspace, name, args)``: through the real tool runtime;
- ``serve(mode, workspace)``: a real server on 127.0.0.1 with a token
  (``RunningServer``), a ``FakeAgent`` as its agent, ``BrowserTab`` sockets;
- ``shell_page(server)``: the session's page in a real Chromium (Playwright's
  async API; skipped without them), for a viewer's browser-level test;
- ``register_plugin(plugin, name)``: a plugin object with ``@hookimpl``
  methods, registered for the length of a ``with`` block;
- pytest fixtures ``pneuma_workspace`` and ``pneuma_server``, with
  ``pytest_plugins = ["pneuma.testing"]`` in a conftest.py.
"""

from __future__ import annotations

from pneuma.testing.agent import FakeAgent, fake_agent_spec
from pneuma.testing.browser import TIMEOUT, BrowserTab, FrameClient
from pneuma.testing.fixtures import pneuma_server, pneuma_workspace
from pneuma.testing.page import shell_page
from pneuma.testing.plugins import register_plugin
from pneuma.testing.server import RunningServer, serve
from pneuma.testing.workspace import (
    call_tool,
    install_skill,
    load_mode,
    make_workspace,
    stored_params,
    tool_context,
)

__all__ = [
    "TIMEOUT",
    "BrowserTab",
    "FakeAgent",
    "FrameClient",
    "RunningServer",
    "call_tool",
    "fake_agent_spec",
    "install_skill",
    "load_mode",
    "make_workspace",
    "pneuma_server",
    "pneuma_workspace",
    "register_plugin",
    "serve",
    "shell_page",
    "stored_params",
    "tool_context",
]
