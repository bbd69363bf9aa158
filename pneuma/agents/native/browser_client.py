"""``pneuma browser-client``: a headless Chromium that carries out browser actions.

It connects to a running ``pneuma run --backend native`` at
``/ws/extension/<session>`` (the session token required), says ``hello``,
reports its tabs (``full_state_sync``, then ``tab_event``s) and executes
the actions the server sends: ``session_start``, ``session_stop``,
``browser_wait_for_loaded``, ``browser_screenshot``,
``browser_readability_extract``, ``browser_xpath_scan``, ``browser_click``,
``browser_type``, ``browser_get_html``. Each is acknowledged at once and
answered with ``browser_action_result``; a repeated action id gets the
first answer again (never a second execution).

Safety rules (docs/design/native-runtime.md, "Browser-action safety"): an action only ever touches
the tab its session opened (``tabId`` must be that tab); pages of the Pneuma server
itself are refused; the client never brings a window to the front.
Screenshots and HTML are uploaded to ``POST /api/artifacts``; results carry
only their references.
"""

from __future__ import annotations

import asyncio
import json
import logging
import platform
import struct
import uuid
from collections import OrderedDict
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from pneuma.api import CHROMIUM, CHROMIUM_ARGS

from .page_scripts import OUTER_HTML, READABLE_TEXT, XPATH_SCAN

log = logging.getLogger(__name__)

INLINE_TEXT_LIMIT = 256 * 1024
WINDOW_ID = 1
DONE_CACHE = 500


class ActionRefused(Exception):
    def __init__(self, message: str, code: str = "E_REFUSED"):
        super().__init__(message)
        self.code = code


def _png_size(data: bytes) -> tuple[int, int]:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    return 0, 0


class BrowserClient:
    def __init__(self, server: str, token: str, *, client_id: str | None = None,
                 name: str | None = None, executable_path: str | None = CHROMIUM,
                 headless: bool = True, viewport: tuple[int, int] = (1280, 800)) -> None:
        self.server = server.rstrip("/")
        self.token = token
        self.client_id = client_id or f"chromium-{uuid.uuid4().hex[:8]}"
        self.name = name or f"Headless Chromium on {platform.node() or 'this machine'}"
        self.executable_path = executable_path
        self.headless = headless
        self.viewport = viewport
        self.session_id: str | None = None
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._pw: Any = None
        self._browser: Any = None
        self._context: Any = None
        self._pages: dict[int, Any] = {}
        self._tab_ids: dict[int, int] = {}  # id(page) -> tab id
        self._titles: dict[int, str] = {}
        self._next_tab = 1
        self._session_tabs: dict[str, int] = {}  # session id -> its own tab
        self._groups: dict[str, dict[str, Any]] = {}  # session id -> group
        self._active: int | None = None
        self._done: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._running: dict[str, asyncio.Task[Any]] = {}
        self._send_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.connected = asyncio.Event()

    # -- lifecycle ---------------------------------------------------------------

    @property
    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def start(self) -> None:
        """Launch Chromium and connect to the server (raises if it cannot)."""
        from playwright.async_api import async_playwright

        self._http = aiohttp.ClientSession()
        async with self._http.get(f"{self.server}/api/session", headers=self._auth) as response:
            if response.status != 200:
                raise ConnectionError(f"{self.server} answered {response.status} for /api/session "
                                      "(is the token right?)")
            info = await response.json()
        self.session_id = info["session_id"]
        if info.get("backend") != "native":
            raise ConnectionError(f"{self.server} runs --backend {info.get('backend')}; browser "
                                  "clients need --backend native")
        self._pw = await async_playwright().start()
        launch: dict[str, Any] = {"headless": self.headless, "args": CHROMIUM_ARGS}
        if self.executable_path:
            launch["executable_path"] = self.executable_path
        self._browser = await self._pw.chromium.launch(**launch)
        self._context = await self._browser.new_context(
            viewport={"width": self.viewport[0], "height": self.viewport[1]})
        self._context.on("page", self._on_new_page)
        await self._connect()

    async def _connect(self) -> None:
        assert self._http is not None
        ws_url = self.server.replace("http", "ws", 1) + f"/ws/extension/{self.session_id}"
        self._ws = await self._http.ws_connect(ws_url, headers=self._auth, heartbeat=20.0,
                                               max_msg_size=16 * 1024 * 1024)
        version = self._browser.version if self._browser else ""
        await self._send({"type": "hello", "clientId": self.client_id, "name": self.name,
                          "metadata": {"kind": "chromium-headless", "browserVersion": version,
                                       "platform": platform.platform(),
                                       "capabilities": sorted(HANDLERS)}})
        welcome = await self._ws.receive_json(timeout=10)
        if welcome.get("type") != "welcome":
            raise ConnectionError(f"the server did not welcome this client: {welcome}")
        self.connected.set()
        await self._send(self._full_state())

    async def run(self) -> None:
        """Serve actions until the server goes away or ``close()``."""
        assert self._ws is not None
        async for frame in self._ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                break
            try:
                message = json.loads(frame.data)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("type") == "browser_action":
                self._spawn(self._handle(message))
        self.connected.clear()

    async def serve_forever(self, retry_delay: float = 2.0) -> None:
        """``run()``, reconnecting whenever the server drops the socket."""
        while True:
            await self.run()
            log.warning("disconnected from %s; reconnecting", self.server)
            while True:
                await asyncio.sleep(retry_delay)
                try:
                    await self._connect()
                    break
                except (aiohttp.ClientError, ConnectionError, asyncio.TimeoutError) as exc:
                    log.warning("reconnecting failed: %s", exc)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._browser is not None:
            try:
                await self._browser.close()
            except Exception:
                pass
        if self._pw is not None:
            await self._pw.stop()
        if self._http is not None:
            await self._http.close()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, message: dict[str, Any]) -> None:
        if self._ws is None or self._ws.closed:
            return
        async with self._send_lock:
            await self._ws.send_str(json.dumps(message, ensure_ascii=False))

    # -- twin ------------------------------------------------------------------

    def _tab_json(self, tab_id: int) -> dict[str, Any]:
        page = self._pages[tab_id]
        group = next((g["id"] for s, g in self._groups.items()
                      if self._session_tabs.get(s) == tab_id), None)
        return {"id": tab_id, "windowId": WINDOW_ID, "url": page.url, "title": self._titles.get(tab_id, ""),
                "active": tab_id == self._active, "groupId": group}

    def _full_state(self) -> dict[str, Any]:
        return {"type": "full_state_sync",
                "windows": [{"id": WINDOW_ID, "focused": False, "type": "normal"}],
                "tabs": [self._tab_json(t) for t in self._pages],
                "groups": list(self._groups.values()),
                "activeTabId": self._active}

    def _on_new_page(self, page: Any) -> None:
        if id(page) in self._tab_ids:
            return
        tab_id = self._next_tab
        self._next_tab += 1
        self._pages[tab_id] = page
        self._tab_ids[id(page)] = tab_id
        self._titles[tab_id] = ""
        self._active = tab_id
        page.on("framenavigated", lambda frame: self._spawn(self._page_changed(page, frame)))
        page.on("load", lambda _: self._spawn(self._page_changed(page, None)))
        page.on("close", lambda _: self._spawn(self._page_closed(page)))
        self._spawn(self._send({"type": "tab_event", "event": "created", "tab": self._tab_json(tab_id)}))

    async def _page_changed(self, page: Any, frame: Any) -> None:
        if frame is not None and frame != page.main_frame:
            return
        tab_id = self._tab_ids.get(id(page))
        if tab_id is None or tab_id not in self._pages:
            return
        try:
            self._titles[tab_id] = await page.title()
        except Exception:
            pass
        await self._send({"type": "tab_event", "event": "updated", "tab": self._tab_json(tab_id)})

    async def _page_closed(self, page: Any) -> None:
        tab_id = self._tab_ids.pop(id(page), None)
        if tab_id is None:
            return
        self._pages.pop(tab_id, None)
        self._titles.pop(tab_id, None)
        for session, tab in list(self._session_tabs.items()):
            if tab == tab_id:
                self._session_tabs.pop(session)
                self._groups.pop(session, None)
        if self._active == tab_id:
            self._active = next(reversed(self._pages), None) if self._pages else None
        await self._send({"type": "tab_event", "event": "removed", "tabId": tab_id,
                          "groups": list(self._groups.values())})

    # -- actions ---------------------------------------------------------------

    async def _handle(self, message: dict[str, Any]) -> None:
        action_id = str(message.get("id") or message.get("actionId") or "")
        await self._send({"type": "ack", "id": action_id})
        if action_id in self._done:
            await self._send(self._done[action_id])
            return
        running = self._running.get(action_id)
        if running is not None:  # the same action again while it runs: answered once it ends
            return
        name = message.get("action") or message.get("name")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        session_id = str(message.get("sessionId") or "")
        handler = HANDLERS.get(str(name))
        self._running[action_id] = asyncio.current_task()  # type: ignore[assignment]
        try:
            if handler is None:
                raise ActionRefused(f"unknown action {name!r}", "E_UNKNOWN_ACTION")
            result = await handler(self, session_id, params)
            reply = {"type": "browser_action_result", "id": action_id, "ok": True, "result": result}
        except ActionRefused as exc:
            reply = {"type": "browser_action_result", "id": action_id, "ok": False,
                     "error": {"code": exc.code, "message": str(exc)}}
        except Exception as exc:  # Playwright timeouts, navigation errors, …
            reply = {"type": "browser_action_result", "id": action_id, "ok": False,
                     "error": {"code": type(exc).__name__, "message": str(exc).split("\n")[0][:500]}}
        finally:
            self._running.pop(action_id, None)
        self._done[action_id] = reply
        while len(self._done) > DONE_CACHE:
            self._done.popitem(last=False)
        await self._send(reply)

    def _is_pneuma_ui(self, url: str) -> bool:
        target = urlsplit(url)
        own = urlsplit(self.server)
        if target.scheme not in ("http", "https"):
            return False
        loopback = {"127.0.0.1", "localhost", "::1", "[::1]"}
        same_host = target.hostname == own.hostname or (
            target.hostname in loopback and own.hostname in loopback)
        return same_host and (target.port or 80) == (own.port or 80)

    def _session_page(self, session_id: str, params: dict[str, Any]) -> Any:
        own = self._session_tabs.get(session_id)
        if own is None or own not in self._pages:
            raise ActionRefused("this session has no tab of its own yet (session_start first)",
                                "E_NO_SESSION_TAB")
        tab_id = params.get("tabId", own)
        if tab_id != own:
            raise ActionRefused(f"tab {tab_id} is not this session's tab ({own}); "
                                "actions only run in the session's own tab", "E_NOT_SESSION_TAB")
        page = self._pages[own]
        if self._is_pneuma_ui(page.url):
            raise ActionRefused("the tab shows Pneuma's own UI; refusing to act on it",
                                "E_PNEUMA_UI")
        return page

    async def _upload(self, data: bytes, content_type: str, kind: str) -> dict[str, Any]:
        assert self._http is not None
        async with self._http.post(f"{self.server}/api/artifacts", params={"kind": kind},
                                   data=data, headers={**self._auth, "Content-Type": content_type}) as r:
            if r.status != 200:
                raise ActionRefused(f"uploading the {kind} failed: HTTP {r.status}", "E_UPLOAD")
            return await r.json()

    async def session_start(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        url = params.get("url")
        if url is not None and (not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https")):
            raise ActionRefused(f"only http(s) URLs can be opened, not {url!r}", "E_BAD_URL")
        if url and self._is_pneuma_ui(url):
            raise ActionRefused("refusing to open Pneuma's own UI in a session tab", "E_PNEUMA_UI")
        own = self._session_tabs.get(session_id)
        if own is not None and own in self._pages and params.get("reuseExistingTab", True):
            page = self._pages[own]
        else:
            page = await self._context.new_page()
            self._on_new_page(page)
            own = self._tab_ids[id(page)]
            self._session_tabs[session_id] = own
            self._groups[session_id] = {"id": len(self._groups) + 1, "windowId": WINDOW_ID,
                                        "title": params.get("groupTitle") or f"Pneuma {session_id[:8]}"}
        if url:
            await page.goto(url, wait_until="domcontentloaded", timeout=30_000)
        try:
            self._titles[own] = await page.title()
        except Exception:
            pass
        await self._send({"type": "tab_event", "event": "updated", "tab": self._tab_json(own),
                          "groups": list(self._groups.values())})
        return {"tabId": own, "windowId": WINDOW_ID, "groupId": self._groups[session_id]["id"],
                "url": page.url, "title": self._titles.get(own, "")}

    async def session_stop(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        own = self._session_tabs.get(session_id)
        if own is not None and own in self._pages and params.get("closeTab", True):
            await self._pages[own].close()
        self._session_tabs.pop(session_id, None)
        self._groups.pop(session_id, None)
        return {"stopped": True}

    async def wait_for_loaded(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        page = self._session_page(session_id, params)
        timeout = float(params.get("timeoutMs") or 30_000)
        await page.wait_for_load_state("load", timeout=timeout)
        return {"status": "complete", "url": page.url, "title": await page.title()}

    async def screenshot(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        page = self._session_page(session_id, params)
        data = await page.screenshot(type="png", full_page=bool(params.get("fullPage")))
        width, height = _png_size(data)
        info = await self._upload(data, "image/png", "screenshot")
        return {"artifactId": info["artifactId"], "url": info["url"], "width": width, "height": height}

    async def readability(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        page = self._session_page(session_id, params)
        extracted = await page.evaluate(READABLE_TEXT)
        result = {"title": extracted.get("title"), "url": extracted.get("url"),
                  "text": extracted.get("text") or "", "markdown": extracted.get("markdown") or ""}
        if len(result["text"].encode("utf-8")) > INLINE_TEXT_LIMIT:
            info = await self._upload(result["markdown"].encode("utf-8"), "text/markdown", "readability")
            result["artifactId"] = info["artifactId"]
            result["text"] = result["text"][:8000]
            result["markdown"] = ""
            result["truncated"] = True
        return result

    async def xpath_scan(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        page = self._session_page(session_id, params)
        scope = params.get("scope") or "viewport"
        return {"elements": await page.evaluate(XPATH_SCAN, scope), "url": page.url}

    def _locator(self, page: Any, xpath: Any) -> Any:
        if not isinstance(xpath, str) or not xpath.strip():
            raise ActionRefused("'xpath' is required", "E_BAD_ARGS")
        return page.locator(f"xpath={xpath}")

    async def click(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        page = self._session_page(session_id, params)
        locator = self._locator(page, params.get("xpath"))
        if await locator.count() == 0:
            raise ActionRefused(f"no element at {params.get('xpath')}", "E_NOT_FOUND")
        await locator.first.click(timeout=10_000, no_wait_after=False)
        return {"clicked": True, "url": page.url}

    async def type_text(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        page = self._session_page(session_id, params)
        locator = self._locator(page, params.get("xpath"))
        if await locator.count() == 0:
            raise ActionRefused(f"no element at {params.get('xpath')}", "E_NOT_FOUND")
        text = params.get("text")
        if not isinstance(text, str):
            raise ActionRefused("'text' must be a string", "E_BAD_ARGS")
        await locator.first.fill(text, timeout=10_000)
        if params.get("submit"):
            await locator.first.press("Enter", timeout=10_000)
        return {"typed": True, "url": page.url}

    async def get_html(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        page = self._session_page(session_id, params)
        html = await page.evaluate(OUTER_HTML, params.get("xpath") or "")
        if html is None:
            raise ActionRefused(f"no element at {params.get('xpath')}", "E_NOT_FOUND")
        info = await self._upload(html.encode("utf-8"), "text/html", "html")
        return {"artifactId": info["artifactId"], "url": info["url"], "size": info["size"]}


HANDLERS = {
    "session_start": BrowserClient.session_start,
    "session_stop": BrowserClient.session_stop,
    "browser_wait_for_loaded": BrowserClient.wait_for_loaded,
    "browser_screenshot": BrowserClient.screenshot,
    "browser_readability_extract": BrowserClient.readability,
    "browser_xpath_scan": BrowserClient.xpath_scan,
    "browser_click": BrowserClient.click,
    "browser_type": BrowserClient.type_text,
    "browser_get_html": BrowserClient.get_html,
}


async def run_client(server: str, token: str, **kwargs: Any) -> None:
    client = BrowserClient(server, token, **kwargs)
    try:
        await client.start()
        print(f"[pneuma] browser client {client.client_id} connected to {server} "
              f"(session {client.session_id})", flush=True)
        await client.serve_forever()
    finally:
        await client.close()
