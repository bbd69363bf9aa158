"""Fixtures shared by the tests of the built-in modes.

A test module provides ``mode`` (the mode it is about); ``seeded`` is then a
fresh workspace initialised from that mode's seed files, as `pneuma run`
does for an empty folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma.host.modes import LoadedMode
from pneuma.workspace.params import init_workspace


@pytest.fixture
def seeded(mode: LoadedMode, tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    init_workspace(mode, workspace)
    return workspace
