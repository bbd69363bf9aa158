"""A browser task end to end: the fake Messages API scripts the model, the
real browser client (headless Chromium) opens a local page."""

from __future__ import annotations

import asyncio

from pneuma.agents.native.browser_client import BrowserClient
from tests.fakes.anthropic_api import text, tool_use

STEP = 20.0  # seconds any single step may take (Chromium is slow to start)


async def test_browser_task_goes_through_selection_confirmation_and_page_preparation(
        make_native, fake_api, pages):
    server = await make_native()
    tab = await server.tab()
    client = BrowserClient(server.base_url, server.token, client_id="chromium-test", name="Test Chromium")
    await client.start()
    runner = asyncio.get_running_loop().create_task(client.run())
    try:
        status, listing = await server.get_json("/api/extension/extension-list")
        assert status == 200
        assert [(c["clientId"], c["kind"], c["online"]) for c in listing["clients"]] == [
            ("chromium-test", "browser", True), (listing["clients"][1]["clientId"], "viewer", True)]
        assert listing["clients"][1]["mode"] == "slide" and listing["viewers"] == 1
        status, reserved = await server.get_json("/api/task/id")
        assert status == 200 and reserved["taskId"].startswith("task_")

        fake_api.push(text("Let me look at the links."), tool_use("browser_xpath_scan", {"scope": "document"}))
        fake_api.push(text("The page is about tide pools north of the harbour."))
        url = f"{pages}/article.html"
        await server.say(tab, f"Summarise {url} for me")

        waiting = await tab.wait_for("browser_selection", STEP, lambda m: m["status"] == "waiting")
        assert waiting["taskId"] == reserved["taskId"]
        assert [c["clientId"] for c in waiting["candidates"]] == ["chromium-test"]
        status, _ = await server.post_json("/api/extension/select", {"clientId": "chromium-test"})
        assert status == 200

        confirm = await tab.wait_for("confirmation_request", STEP)
        assert confirm["kind"] == "browser_task"
        assert url in confirm["summary"] and confirm["details"]["clientId"] == "chromium-test"
        await tab.send({"type": "confirmation_response", "request_id": confirm["request_id"],
                        "approved": True})
        result = await tab.wait_for("result", 45)
        assert result["data"]["is_error"] is False, result
        assert "tide pools" in result["data"]["result"]
        assert result["data"]["num_turns"] == 2
        assert result["data"]["total_cost_usd"] > 0
    finally:
        runner.cancel()
        await client.close()

    events = tab.broadcasts()
    statuses = [m["task"]["status"] for m in events if m["type"] == "task_update"]
    assert statuses == ["created", "waiting_for_browser_selection",
                        "waiting_for_user_confirmation", "running", "completed"]

    def index(kind: str, where=lambda m: True) -> int:
        return next(i for i, m in enumerate(events) if m["type"] == kind and where(m))

    def task_at(status: str) -> int:
        return index("task_update", lambda m: m["task"]["status"] == status)

    def action(name: str, phase: str) -> int:
        return index("browser_action", lambda m: m["action"]["name"] == name and m["phase"] == phase)

    order = [
        index("user_message"),
        task_at("created"),
        task_at("waiting_for_browser_selection"),
        index("browser_selection", lambda m: m["status"] == "waiting"),
        index("browser_selection", lambda m: m["status"] == "selected"),
        task_at("waiting_for_user_confirmation"),
        index("confirmation_request"),
        task_at("running"),
        action("session_start", "start"),
        action("session_start", "success"),
        action("browser_wait_for_loaded", "success"),
        action("browser_screenshot", "success"),
        action("browser_readability_extract", "success"),
        index("page_prepared"),
        index("stream_event"),
        index("assistant", lambda m: any(b["type"] == "tool_use" for b in m["message"]["content"])),
        action("browser_xpath_scan", "success"),
        index("tool_result"),
        index("assistant", lambda m: "tide pools" in str(m["message"]["content"])),
        task_at("completed"),
        index("result"),
    ]
    assert order == sorted(order), [events[i]["type"] for i in order]

    # Page preparation happened before the model saw anything, and it saw the page.
    prepared = events[index("page_prepared")]["page"]
    assert prepared["failures"] == []
    assert prepared["title"] == "Tide pools of the north coast"
    assert prepared["screenshot"]["width"] == 1280
    first = fake_api.conversation_requests()[0]
    user_blocks = first["messages"][0]["content"]
    page_text = " ".join(b.get("text", "") for b in user_blocks if b["type"] == "text")
    assert "hermit crabs and sculpins" in page_text
    assert "Contact us" not in page_text and "must not be extracted" not in page_text
    assert any(b["type"] == "image" for b in user_blocks)
    assert "pneuma-slide" in first["system"]  # the skill is part of the prompt
    tool_names = {t["name"] for t in first["tools"]}
    assert {"browser_open", "browser_click", "browser_type", "browser_xpath_scan"} <= tool_names
    assert any(n.startswith("viewer__") for n in tool_names)

    # The scan's result went back to the model; the links are real XPaths.
    scan = fake_api.tool_results()[0]
    assert "/about" in str(scan["content"]) and "xpath" in str(scan["content"])

    # Screenshots are artifacts behind the token.
    shot_url = prepared["screenshot"]["url"]
    async with server.client.get(shot_url, headers=server.auth) as response:
        assert response.status == 200
        assert (await response.read()).startswith(b"\x89PNG")
    async with server.client.get(shot_url) as response:
        assert response.status == 401
    assert list((server.workspace / ".pneuma" / "artifacts").glob("art_screenshot_*.png"))

    # The twin saw the session tab.
    twins = [m for m in events if m["type"] == "twin_update"]
    assert any(any(t["url"] == f"{pages}/article.html" for t in m["twin"]["tabs"]) for m in twins)
    await server.close()
