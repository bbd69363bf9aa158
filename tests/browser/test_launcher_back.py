"""Back to the launcher from a workspace (issue 25, item 5), in real Chromium.

Opening a workspace goes to its page in the same tab; the browser's Back
brings the launcher back, from the back/forward cache when the browser
keeps it there (Chromium does, headless too). The launcher must then be
usable as if just loaded: the new-workspace dialog not left on
"Starting…" with Cancel disabled, no Open button left on "Opening…", and
the list saying what runs now."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from pneuma.tools.chromium import CHROMIUM_ARGS
from tests.browser.browser_helpers import CHROMIUM
from tests.browser.test_launcher import _new_page, launcher  # noqa: F401  (the fixture)

WORKSPACE_PAGE = re.compile(r"/\?session=[^&]+&token=")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium as a person runs it: with its back/forward cache, which
    Playwright turns off by default (``--disable-back-forward-cache``)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                                     ignore_default_args=["--disable-back-forward-cache"])
        yield chromium
        chromium.close()


def _wait_for_workspace(page: Any, timeout: float = 20_000) -> None:
    page.wait_for_url(WORKSPACE_PAGE, timeout=timeout)
    page.wait_for_selector('.pill[data-state="open"]', timeout=timeout)


def _was_restored_from_cache(page: Any) -> bool:
    """The page came back from the back/forward cache (not loaded again),
    so this test sees what a person's Back shows."""
    return bool(page.evaluate("() => window.__restoredFromCache === true"))


def _watch_restores(page: Any) -> None:
    page.add_init_script(
        "addEventListener('pageshow', (e) => { if (e.persisted) window.__restoredFromCache = true; });")


def test_back_from_a_new_workspace_leaves_the_launcher_usable(browser, launcher):  # noqa: F811
    served = launcher()
    page = _new_page(browser, "en-US")
    _watch_restores(page)
    try:
        page.goto(served.url)
        page.locator(".ln-card[data-mode='doc']").click()
        page.locator(".ln-dialog button[type=submit]").click()
        _wait_for_workspace(page)

        page.go_back(wait_until="commit")  # a page from the cache fires no load
        expect(page).to_have_url(re.compile(re.escape(served.base)))
        assert _was_restored_from_cache(page)
        # Nothing is left half-started: the dialog is closed (its folder now
        # a workspace), or, if shown, usable and labelled as before.
        expect(page.locator(".ln-dialog button[type=submit]")).to_have_count(0)
        doc = page.locator(".ln-session .ln-ws-name", has_text="doc")
        expect(doc).to_be_visible(timeout=10_000)  # the list refreshed: it runs now

        # A second workspace from the same launcher, then Back again.
        page.locator(".ln-card[data-mode='draw']").click()
        submit = page.locator(".ln-dialog button[type=submit]")
        expect(submit).to_have_text("Create and open")
        submit.click()
        _wait_for_workspace(page)
        page.go_back(wait_until="commit")  # a page from the cache fires no load
        expect(page).to_have_url(re.compile(re.escape(served.base)))
        expect(page.locator(".ln-dialog")).to_have_count(0)
        page.locator(".ln-card[data-mode='webcraft']").click()
        expect(page.locator(".ln-dialog button[type=submit]")).to_be_enabled()
        expect(page.locator(".ln-dialog button[type=submit]")).to_have_text("Create and open")
        expect(page.locator(".ln-dialog button", has_text="Cancel")).to_be_enabled()
        page.locator(".ln-dialog button", has_text="Cancel").click()
        expect(page.locator(".ln-dialog")).to_have_count(0)
        assert page.console_errors == []
    finally:
        page.context.close()


def test_back_from_an_opened_workspace_leaves_open_usable(browser, launcher):  # noqa: F811
    served = launcher()
    page = _new_page(browser, "en-US")
    _watch_restores(page)
    try:
        page.goto(served.url)
        page.locator(".ln-card[data-mode='doc']").click()
        page.locator(".ln-dialog button[type=submit]").click()
        _wait_for_workspace(page)
        page.goto(served.url)
        row = page.locator(".ln-row", has=page.locator(".ln-ws-name", has_text="doc"))
        open_button = row.locator(".ln-btn-primary")
        expect(open_button).to_have_text("Open", timeout=10_000)
        open_button.click()
        _wait_for_workspace(page)

        page.go_back(wait_until="commit")  # a page from the cache fires no load
        expect(page).to_have_url(re.compile(re.escape(served.base)))
        assert _was_restored_from_cache(page)
        expect(open_button).to_have_text("Open")
        expect(open_button).to_be_enabled()
        open_button.click()  # and it works again
        _wait_for_workspace(page)
        assert page.console_errors == []
    finally:
        page.context.close()
