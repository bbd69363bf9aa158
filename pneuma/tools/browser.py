"""``browser_action``: drive a local page in a headless Chromium.

A generic agent tool any mode can list in its manifest (handler
``pneuma.tools.browser:browser_action``, ``devOnly``: it is off until
``--enable-browser`` or the policy ``browser.enabled`` turns it on).

Arguments ``{action: "open" | "click" | "screenshot", url?, selector?,
path?}``; answer ``{ok: true}``. ``open`` loads ``url``; ``click`` and
``screenshot`` work on the page the last ``open`` (or a click's navigation)
left, kept in the tool state, together with the browser's cookies: a page
authorised by a ``?token=`` URL (which the server trades for a cookie) stays
authorised on the next call. Only local pages may be loaded: the URL's host
must be ``localhost`` or ``127.0.0.1`` and in the policy
``browserAllowedHosts``, and every request the page makes to any other host
is blocked. A screenshot ``path`` with a folder is a workspace path (through
the sandbox); a bare file name goes to the policy's ``browser.screenshotDir``
(``.pneuma/screenshots`` by default).
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.core.state_files import write_state_bytes
from pneuma.tools.chromium import CHROMIUM, CHROMIUM_ARGS
from pneuma.tools.context import ToolContext

LOCAL_HOSTS = ("localhost", "127.0.0.1")
STATE_NAME = "browser"
VIEWPORT = {"width": 1280, "height": 720}


def _browser(ctx: ToolContext) -> dict[str, Any]:
    section = ctx.policies.get("browser")
    return section if isinstance(section, dict) else {}


def is_local_url(url: str) -> bool:
    """``http(s)://localhost|127.0.0.1[:port]/…`` without credentials."""
    try:
        parsed = urllib.parse.urlsplit(url)
    except ValueError:
        return False
    return (parsed.scheme in ("http", "https") and parsed.hostname in LOCAL_HOSTS
            and not parsed.username)


def timeout_ms(ctx: ToolContext) -> int:
    return int(_browser(ctx).get("timeoutMs") or 15000)


def allowed_hosts(ctx: ToolContext) -> list[str]:
    return [str(h) for h in ctx.policies.get("browserAllowedHosts") or LOCAL_HOSTS]


def browser_info(ctx: ToolContext) -> dict[str, Any] | None:
    """What ``get_runtime_info`` reports of this tool (None while it is off)."""
    if not _browser(ctx).get("enabled") or "browser_action" not in ctx.enabled_tools:
        return None
    return {
        "enabled": True,
        "allowedHosts": allowed_hosts(ctx),
        "timeoutMs": timeout_ms(ctx),
        "screenshotDir": str(_browser(ctx).get("screenshotDir") or ".pneuma/screenshots"),
    }


def _allowed(ctx: ToolContext, url: str) -> bool:
    try:
        host = urllib.parse.urlsplit(url).hostname
    except ValueError:
        return False
    return is_local_url(url) and host in allowed_hosts(ctx)


def _screenshot_target(ctx: ToolContext, rel: str) -> Path:
    if not rel.lower().endswith((".png", ".jpg", ".jpeg")):
        raise ToolError("E_BAD_ARGS", "a screenshot path must end in .png, .jpg or .jpeg",
                        details={"field": "path", "path": rel})
    if "/" in rel.strip("/"):
        return ctx.sandbox.resolve(rel)
    # A bare file name goes to the screenshot folder, under .pneuma/ by
    # default, which the sandbox keeps from the file tools: checked here.
    folder = str(_browser(ctx).get("screenshotDir") or ".pneuma/screenshots")
    ctx.sandbox.normalize(rel)
    base = (ctx.workspace / folder).resolve()
    if base != ctx.workspace and ctx.workspace not in base.parents:
        raise ToolError("E_DENY_PATH", f"screenshotDir {folder} is outside the workspace",
                        details={"path": folder})
    return base / rel


async def browser_action(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    action = args["action"]
    saved = ctx.state.load(STATE_NAME, {}) or {}
    if action == "open":
        url = args["url"]
        storage = None  # a fresh page: what an earlier one kept does not apply
    else:
        url = saved.get("url")
        storage = saved.get("storage")
        if not url:
            raise ToolError("E_BAD_ARGS", f"{action} needs an open page: call browser_action open first",
                            details={"field": "action"})
    if not _allowed(ctx, url):
        raise ToolError("E_POLICY_VIOLATION", f"{url} is not a local address",
                        details={"url": url},
                        hint="Only http://localhost:* and http://127.0.0.1:* may be opened.")
    target = _screenshot_target(ctx, args["path"]) if action == "screenshot" else None
    limit = timeout_ms(ctx)

    try:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout
        from playwright.async_api import async_playwright
    except ImportError:
        raise ToolError("E_UNSUPPORTED", "Playwright is not installed",
                        hint="pip install playwright") from None
    if not Path(CHROMIUM).exists():
        raise ToolError("E_UNSUPPORTED", f"no Chromium at {CHROMIUM}",
                        hint="Install Debian's chromium package.")

    async def guard(route: Any) -> None:
        request_url = route.request.url
        if _allowed(ctx, request_url) or request_url.startswith(("data:", "blob:")):
            await route.continue_()
        else:
            await route.abort("blockedbyclient")

    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM,
                                                       args=CHROMIUM_ARGS, headless=True)
            try:
                context = await browser.new_context(viewport=VIEWPORT, storage_state=storage)
                page = await context.new_page()
                page.set_default_timeout(limit)
                await page.route("**/*", guard)
                response = await page.goto(url, wait_until="load", timeout=limit)
                if response is not None and response.status >= 400:
                    raise ToolError("E_PREVIEW_FAIL", f"{url} answered {response.status}",
                                    details={"url": url, "status": response.status})
                if action == "click":
                    await page.click(args["selector"], timeout=limit)
                    await page.wait_for_load_state("load", timeout=limit)
                elif action == "screenshot":
                    assert target is not None
                    target.parent.mkdir(parents=True, exist_ok=True)
                    await page.screenshot(path=str(target))
                # The page may have moved (a click, a script dropping ?token=
                # from the address): the next call starts where this one ended.
                now_at = page.url if action == "click" else url
                kept = await context.storage_state()
            finally:
                await browser.close()
    except ToolError:
        raise
    except PlaywrightTimeout as exc:
        raise ToolError("E_TIMEOUT", f"browser {action} timed out after {limit} ms: "
                        f"{exc.message.splitlines()[0]}",
                        details={"url": url, "action": action}) from None
    except PlaywrightError as exc:
        raise ToolError("E_PREVIEW_FAIL", f"browser {action} failed: {exc.message.splitlines()[0]}",
                        details={"url": url, "action": action},
                        hint="Is the local page being served? Check the URL it was given.") from None
    if _allowed(ctx, now_at):
        _save_private(ctx, {"url": now_at, "storage": kept})
    return {"ok": True}


def _save_private(ctx: ToolContext, value: dict[str, Any]) -> None:
    """Into the tool state, readable by this user only: the URL and the
    cookies may hold a server's session token."""
    data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    write_state_bytes(ctx.state.directory / f"{STATE_NAME}.json", data, 0o600)
