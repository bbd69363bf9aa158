"""Build the reference corpus games (../shared/reference/webgal/corpus) as game folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

REFERENCE = Path("/work/shared/reference/webgal")
CORPUS = REFERENCE / "corpus"


def projects() -> list[str]:
    return [entry["project"] for entry in json.loads((CORPUS / "INDEX.json").read_text())]


def build_game(project: str, workspace: Path) -> Path:
    """Lay out <workspace>/game/ from the project's manifest.json: every listed file exists
    (empty unless it was copied into the corpus: scenes, config.txt, animationTable.json).
    Returns the game folder."""
    src = CORPUS / project
    manifest = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
    game = workspace / "game"
    game.mkdir(parents=True, exist_ok=True)
    for folder, names in manifest["files"].items():
        base = game if folder == "_root" else game / folder
        for name in names:
            target = base / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
    for name in manifest.get("copied_scenes", []):
        shutil.copyfile(src / "scene" / name, game / "scene" / name)
    for rel in manifest.get("copied_other", []):
        shutil.copyfile(src / rel, game / rel)
    return game


def scene_files(project: str) -> list[Path]:
    return sorted((CORPUS / project / "scene").glob("*.txt"))
