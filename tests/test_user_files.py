"""The person's own JSON files (the list of recent workspaces and the
preferences) share one helper, pneuma.core.user_files, and so one
behaviour: a damaged file is always kept, never overwritten by a later
damaged one, and a file at the name that is not a regular file is refused
in the same words by both."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pneuma.server.preferences import PreferenceStore, UnusablePreferences, check_change
from pneuma.startup.recent import RecentWorkspaces, UnusableList


def test_every_damaged_preferences_file_is_kept(tmp_path: Path) -> None:
    warnings: list[str] = []
    store = PreferenceStore(tmp_path, warn=warnings.append)
    for n in range(3):
        (tmp_path / "preferences.json").write_text(f'{{"damaged": {n}')
        store.change(check_change({"locale": "en"}), None)
    kept = sorted(p.read_text() for p in tmp_path.iterdir() if ".damaged" in p.name)
    assert kept == sorted(f'{{"damaged": {n}' for n in range(3))
    assert len(warnings) == 3 and all("moved to" in line for line in warnings)
    assert store.read().locale == "en"


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_both_files_name_what_is_in_their_place_alike(tmp_path: Path, kind: str) -> None:
    for name in ("preferences.json", "workspaces.json"):
        if kind == "folder":
            (tmp_path / name).mkdir()
        else:
            os.mkfifo(tmp_path / name)
    with pytest.raises(UnusablePreferences) as preferences_refusal:
        PreferenceStore(tmp_path).change(check_change({"locale": "en"}), None)
    with pytest.raises(UnusableList) as list_refusal:
        RecentWorkspaces(tmp_path).record(tmp_path / "w", "doc")
    what = "a folder" if kind == "folder" else "a FIFO"
    for refusal, name in ((preferences_refusal, "preferences.json"),
                          (list_refusal, "workspaces.json")):
        assert f"{tmp_path / name} is {what}, not a file;" in str(refusal.value)
