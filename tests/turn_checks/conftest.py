"""The server tests' fixtures (tests/server/conftest.py), for the turn
checks' tests against a served session, with the modes whose checks are
tested loaded (``pm``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pneuma.host.plugins import LOAD_PLUGINS_ENV, get_plugin_manager
from pneuma.host.registry import reset_plugin_manager
from tests.server.conftest import make_server, slide_mode  # noqa: F401


@pytest.fixture
def pm(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "slide,doc,diagram")
    reset_plugin_manager()
    yield get_plugin_manager()
    reset_plugin_manager()
