"""The headless viewer's memory bound: after an answer, a Chromium whose
process tree holds more than ``PNEUMA_HEADLESS_MAX_RSS_MB`` is closed, and
the next action is answered by a fresh one (docs/headless-viewer.md)."""

from __future__ import annotations

from typing import Any

from tests.headless_viewer.test_headless_viewer import (
    alive,
    answered,
    status_of,
    wait_until,
)


def test_a_chromium_over_the_memory_bound_is_closed_and_started_again(pneuma_server: Any) -> None:
    # 1 MiB: any real Chromium is over it.
    server = pneuma_server("slide", backend="none", env={"PNEUMA_HEADLESS_MAX_RSS_MB": "1"})
    answered(server, "describe-view")
    first = status_of(server)
    assert first["maxRssBytes"] == 1 << 20
    wait_until(lambda: not status_of(server)["running"], 15, "the Chromium over the bound was closed")
    assert status_of(server)["rssBytes"] > 1 << 20
    wait_until(lambda: not alive(first["pid"]), 10, "its process ended")

    answered(server, "describe-view")
    assert status_of(server)["starts"] == 2
