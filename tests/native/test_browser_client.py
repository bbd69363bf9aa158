"""The real browser client (headless Chromium) against local pages, driven
through the server's ActionScheduler exactly as the orchestrator drives it."""

from __future__ import annotations

import asyncio

import pytest

from pneuma.agents.native.browser_client import BrowserClient
from pneuma.agents.native.scheduler import ActionError


async def test_click_type_scan_and_read_in_a_real_browser(make_native, pages):
    server = await make_native()
    client = BrowserClient(server.base_url, server.token, client_id="chromium-actions")
    await client.start()
    runner = asyncio.get_running_loop().create_task(client.run())
    scheduler = server.backend.scheduler
    sid = server.session.id

    async def act(name, **params):
        return await scheduler.run(sid, "chromium-actions", name, params, timeout=20)

    try:
        opened = await act("session_start", url=f"{pages}/form.html", groupTitle="Tests")
        tab = opened["tabId"]
        assert opened["title"] == "Greeting form" and opened["groupId"] == 1
        assert (await act("browser_wait_for_loaded", tabId=tab))["status"] == "complete"

        scan = (await act("browser_xpath_scan", tabId=tab, scope="document"))["elements"]
        by_xpath = {e["xpath"]: e for e in scan}
        assert by_xpath['//*[@id="name"]']["tag"] == "input"
        assert by_xpath['//*[@id="go"]']["text"] == "Greet me"
        assert not any("ghost" in x for x in by_xpath)  # hidden elements are left out
        link = next(e for e in scan if e["tag"] == "a")
        assert link["text"] == "Read the tide pool story" and link["bbox"]["w"] > 0

        assert (await act("browser_type", tabId=tab, xpath='//*[@id="name"]', text="Ada"))["typed"]
        assert (await act("browser_click", tabId=tab, xpath='//*[@id="go"]'))["clicked"]
        html = await act("browser_get_html", tabId=tab, xpath='//*[@id="out"]')
        assert server.backend.artifacts.read(html["artifactId"]) == b'<p id="out">Hello, Ada!</p>'

        search = next(e for e in scan if e.get("name") == "q")
        await act("browser_type", tabId=tab, xpath=search["xpath"], text="tides", submit=True)
        await act("browser_wait_for_loaded", tabId=tab)
        page = await act("browser_readability_extract", tabId=tab)
        assert page["title"] == "Search results" and "tide tables" in page["text"]

        await act("session_start", url=f"{pages}/article.html")
        article = await act("browser_readability_extract", tabId=tab)
        assert article["markdown"].startswith("# Tide pools of the north coast")
        assert "- Giant green anemones" in article["markdown"]
        assert "## What lives there" in article["markdown"]
        for noise in ("Contact us", "Privacy", "Ten beaches", "must not be extracted"):
            assert noise not in article["text"]

        shot = await act("browser_screenshot", tabId=tab, fullPage=True)
        assert shot["width"] == 1280 and shot["height"] >= 800
        assert server.backend.artifacts.read(shot["artifactId"]).startswith(b"\x89PNG")

        # Safety: only the session's own tab, never Pneuma's own UI.
        with pytest.raises(ActionError) as other_tab:
            await act("browser_click", tabId=tab + 100, xpath="//a")
        assert other_tab.value.code == "E_NOT_SESSION_TAB"
        with pytest.raises(ActionError) as ui:
            await act("session_start", url=f"{server.base_url}/?session={sid}")
        assert ui.value.code == "E_PNEUMA_UI"
        with pytest.raises(ActionError) as other_session:
            await scheduler.run("another-session", "chromium-actions", "browser_click",
                                {"tabId": tab, "xpath": "//a"}, timeout=5)
        assert other_session.value.code == "E_NO_SESSION_TAB"

        assert (await act("session_stop"))["stopped"] is True
        await asyncio.sleep(0.2)
        twin = server.backend.twins.get("chromium-actions")
        assert all(t["id"] != tab for t in twin["tabs"])
    finally:
        runner.cancel()
        await client.close()
    await server.close()
