"""Fixtures for the WebGAL tool tests: corpus games and seeded workspaces."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import build_game

from pneuma.api import running_headless_server
from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace


@pytest.fixture(scope="session")
def corpus_games(tmp_path_factory):
    """project -> workspace holding game/ built from the project's manifest.json."""
    cache: dict[str, Path] = {}

    def get(project: str) -> Path:
        if project not in cache:
            ws = tmp_path_factory.mktemp(project)
            build_game(project, ws)
            cache[project] = ws
        return cache[project]

    return get


def _stop_preview_server(ws: Path) -> None:
    """Stop the headless server preview_scene may have started for ``ws``."""
    server = running_headless_server("webgal", ws)
    if server is not None:
        server.stop()


@pytest.fixture
def seeded(tmp_path):
    """A workspace seeded with the webgal mode's sample game (language zh-CN)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    init_workspace(get_mode("webgal"), ws, {"language": "zh-CN"})
    yield ws
    _stop_preview_server(ws)
