"""What setting up a workspace promises for each built-in mode with seeds:
a folder that already holds the person's own work of the mode's kind gets
no seed files, and installing the skill a second time (every `pneuma run`
does) changes no file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pneuma.host.modes import LoadedMode
from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace
from pneuma.workspace.skill import install_skill

Snapshot = Callable[[Path], dict[str, bytes]]

# The params each mode's skill is installed with; coauthor's skill fills
# them into its text, so a real set shows that the filled-in text is stable.
PARAMS: dict[str, dict[str, Any]] = {
    "doc": {},
    "draw": {},
    "coauthor": {"paperTitle": "Quiet Agents", "venue": "CHI 2026 Late-Breaking Work, 6 pages",
                 "citationStyle": "numeric"},
}  # fmt: skip

# A file of the person's own that makes a workspace one of the mode's kind.
OWN_WORK: dict[str, tuple[str, str]] = {
    "doc": ("docs/plan.md", "# Plan\n"),
    "draw": ("mine.excalidraw", "{}"),
    "coauthor": ("chapters/one.tex", "\\chapter{One}\n"),
}


@pytest.fixture(params=sorted(PARAMS))
def mode(request: pytest.FixtureRequest) -> LoadedMode:
    return get_mode(request.param)


def test_a_workspace_with_its_own_work_is_not_seeded(mode: LoadedMode, tmp_path: Path, snapshot: Snapshot) -> None:
    rel, text = OWN_WORK[mode.name]
    workspace = tmp_path / "ws"
    (workspace / rel).parent.mkdir(parents=True)
    (workspace / rel).write_text(text, "utf-8")
    result = init_workspace(mode, workspace)
    assert result.seeded == []
    # Only the person's file, unchanged (.pneuma/ is Pneuma's own state).
    files = {path: data for path, data in snapshot(workspace).items() if not path.startswith(".pneuma/")}
    assert files == {rel: text.encode()}


def test_second_install_changes_nothing(mode: LoadedMode, seeded: Path, snapshot: Snapshot) -> None:
    params = PARAMS[mode.name]
    install_skill(mode, seeded, params)
    before = snapshot(seeded)
    again = install_skill(mode, seeded, params)
    assert again.changes == []
    assert snapshot(seeded) == before
