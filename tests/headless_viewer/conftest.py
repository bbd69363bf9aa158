"""The headless viewer's tests start `pneuma run` and open pages as the
browser tests do: the same fixtures (tests/browser/conftest.py), skipped
where Chromium or the shell's vendored files are missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.browser_helpers import browser_problems
from tests.browser.conftest import browser, open_page, pneuma_server  # noqa: F401 (fixtures)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problems = browser_problems()
    if not problems:
        return
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.skip(reason="; ".join(problems)))


@pytest.fixture(autouse=True)
def headless_viewer_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root conftest turns the headless viewer off for every other test."""
    monkeypatch.setenv("PNEUMA_HEADLESS_VIEWER", "1")
