"""The real ACP agent tests drive Pneuma's page in Chromium with the
browser tests' own fixtures (tests/browser/conftest.py): the same
`pneuma run` starter, browser and pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser.browser_helpers import skip_without_a_browser
from tests.browser.conftest import browser, open_page, pneuma_server, shot  # noqa: F401 (fixtures)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    skip_without_a_browser(items, Path(__file__).parent / "test_claude_acp_page.py")
