"""Serve first, in a real browser: on a warm start the page, its scripts,
the mode's viewer and the session come up while the real server is still
being built (held back here by an import gate, see tests/test_serve_first.py),
and the page's socket connects as soon as it is up."""

from __future__ import annotations

import signal

from tests.test_serve_first import _gated_env


def test_a_warm_start_shows_the_page_before_the_server_is_built(pneuma_server, open_page,
                                                                 tmp_path, shot):
    env, gate = _gated_env(tmp_path)
    workspace = tmp_path / "deck"
    gate.touch()
    first = pneuma_server("slide", backend="none", workspace=workspace, env=env)
    first.process.send_signal(signal.SIGTERM)
    assert first.process.wait(15) == 0
    gate.unlink()

    server = pneuma_server("slide", backend="none", workspace=workspace, env=env)
    page = open_page(server, wait_connected=False)
    # Shell, viewer module and session, all from the early server.
    page.wait_for_selector(".pill", timeout=15_000)
    page.wait_for_function("document.title.includes('Pneuma') && document.title.includes('·')")
    assert page.get_attribute(".pill", "data-state") != "open"  # the socket waits
    shot(page, "serve-first-before-server")

    gate.touch()
    page.wait_for_selector('.pill[data-state="open"]', timeout=30_000)
    page.wait_for_selector(".viewer-root iframe, .viewer-root *", timeout=15_000)
    assert page.console_errors == []
