"""The headless viewer's tests start `pneuma run` and open pages as the
browser tests do: the same fixtures (tests/browser/conftest.py), skipped
where Chromium or the shell's vendored files are missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.browser_helpers import skip_without_a_browser
from tests.browser.conftest import browser, open_page, pneuma_server  # noqa: F401 (fixtures)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_without_a_browser(items, Path(__file__).parent)


@pytest.fixture(autouse=True)
def headless_viewer_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root conftest turns the headless viewer off for every other test."""
    monkeypatch.setenv("PNEUMA_HEADLESS_VIEWER", "1")
