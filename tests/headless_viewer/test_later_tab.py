"""A tab the person opens after the agent navigated in the headless viewer
shows that place; while it is open the agent's actions are that tab's
alone, and the headless viewer answers again once it closes
(docs/headless-viewer.md)."""

from __future__ import annotations

from typing import Any

from tests.headless_viewer.test_headless_viewer import (
    NO_AGENT,
    action,
    answered,
    status_of,
    wait_until,
)


def test_a_tab_opened_after_the_agent_navigated_shows_that_slide(pneuma_server: Any, open_page: Any) -> None:
    server = pneuma_server("slide", **NO_AGENT)
    went = answered(server, "navigate-to", {"file": "slides/03-point.html"})
    assert "slide 3" in went["message"].lower(), went

    page = open_page(server)

    # The person's tab now answers (no "headless" mark) and shows slide 3.
    def shows_slide_three() -> bool:
        status, answer = action(server, "describe-view")
        return status == 200 and "viewer" not in answer and answer["data"]["current"]["index"] == 3
    wait_until(shows_slide_three, 10, "the new tab shows the slide the agent navigated to")

    # While the tab is open, actions are the tab's alone: the headless page
    # (still running) does not follow them.
    status, went = action(server, "navigate-to", {"file": "slides/05-alignment.html"})
    assert status == 200 and "viewer" not in went, went
    page.context.close()

    def headless_again() -> dict[str, Any] | None:
        status, answer = action(server, "describe-view", timeout=3)
        return answer if status == 200 and answer.get("viewer") == "headless" else None
    wait_until(headless_again, 15, "the headless viewer answers once the tab closed")
    assert headless_again()["data"]["current"]["index"] == 3
    assert status_of(server)["starts"] == 1
