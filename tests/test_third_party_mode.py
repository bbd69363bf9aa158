"""A mode from a distribution Pneuma has never heard of: built as a wheel,
installed into a separate directory, found through its entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

DIST = "pneuma-acme-kanban"

MANIFEST = {
    "name": "kanban",
    "version": "0.3.0",
    "displayName": {"en": "Kanban board"},
    "description": "a kanban board kept in board.json",
    "skill": {"installName": "acme-kanban",
              "mdScene": "The person sees the board's columns side by side."},
    "viewer": {"watchPatterns": ["board.json"]},
    "init": {
        "contentCheckPattern": "board.json",
        "seedFiles": {"seeds/": "."},
        "params": [{"name": "boardName", "label": "Board name", "defaultValue": "Team board"}],
    },
    "viewerApi": {
        "workspace": {"type": "single", "multiFile": False, "ordered": False,
                      "hasActiveFile": False},
        "actions": [
            {"id": "focus-card", "label": "Focus card", "category": "navigate",
             "params": {"card": {"type": "string", "description": "Card id", "required": True}},
             "description": "Scroll to a card and highlight it"},
        ],
    },
    "workflows": [
        {"id": "triage", "label": "Triage the backlog", "steps": [
            {"id": "sort", "label": "Sort the backlog", "prompt": "Order the backlog by value."},
            {"id": "focus", "label": "Show the top card", "action": "focus-card",
             "params": {"card": "top"}},
        ]},
    ],
}

SKILL_MD = """---
name: acme-kanban
description: Use when editing the kanban board in board.json.
---
# Working on {{boardName}}

board.json holds `columns`, each with `cards` ({"id", "title"}).
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def installed_site(tmp_path_factory) -> Path:
    """Build the distribution's wheel and install it into its own directory."""
    root = tmp_path_factory.mktemp("third_party")
    source = root / "src"
    _write(source, {
        "pyproject.toml": textwrap.dedent(f"""\
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"

            [project]
            name = "{DIST}"
            version = "0.3.0"
            description = "A kanban mode for Pneuma, by Acme."
            requires-python = ">=3.11"
            dependencies = ["pneuma"]

            [project.entry-points.pneuma]
            kanban = "pneuma_kanban"

            [tool.hatch.build.targets.wheel]
            packages = ["pneuma_kanban"]
            """),
        "pneuma_kanban/__init__.py": textwrap.dedent("""\
            from pathlib import Path

            from pneuma import hookimpl
            from pneuma.host.modes import ModeSource

            PACKAGE_DIR = Path(__file__).resolve().parent


            @hookimpl
            def register_modes():
                return [ModeSource(PACKAGE_DIR / "manifest.json", PACKAGE_DIR)]
            """),
        "pneuma_kanban/manifest.json": json.dumps(MANIFEST, indent=2),
        "pneuma_kanban/skill/SKILL.md": SKILL_MD,
        "pneuma_kanban/skill/reference/columns.md": "Columns: Backlog, Doing, Done.\n",
        "pneuma_kanban/seeds/board.json": json.dumps(
            {"columns": [{"name": "Backlog", "cards": []}]}, indent=2) + "\n",
    })
    dist = root / "dist"
    build = _run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                  "--outdir", str(dist), str(source)], os.environ.copy(), root)
    assert build.returncode == 0, build.stdout + build.stderr
    [wheel] = dist.glob("*.whl")
    site = root / "site"
    install = _run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--quiet", "--target", str(site), str(wheel)], os.environ.copy(), root)
    assert install.returncode == 0, install.stdout + install.stderr
    assert (site / "pneuma_kanban" / "skill" / "SKILL.md").is_file()
    return site


@pytest.fixture
def env(installed_site) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PNEUMA_")}
    env["PYTHONPATH"] = str(installed_site)
    return env


def _pneuma(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "pneuma.cli", *args], env, cwd)


def test_third_party_mode_is_listed_with_its_distribution(installed_site, env, tmp_path):
    result = _pneuma(["modes", "--json"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    kanban = next(m for m in payload["modes"] if m["name"] == "kanban")
    assert kanban["distribution"] == DIST
    assert kanban["version"] == "0.3.0"
    assert kanban["plugin"] == "kanban"
    assert kanban["hooks"] == ["register_modes"]
    assert kanban["workspace"] == "single"
    assert (kanban["actions"], kanban["workflows"]) == (1, 1)
    assert Path(kanban["paths"]["package"]) == installed_site / "pneuma_kanban"
    plugin = next(p for p in payload["plugins"] if p["name"] == "kanban")
    assert plugin == {"name": "kanban", "distribution": DIST, "version": "0.3.0",
                      "entryPoint": "pneuma_kanban", "hooks": ["register_modes"],
                      "modes": ["kanban"]}
    assert not [e for e in payload["errors"] if e["plugin"] == "kanban"]

    table = _pneuma(["modes"], env, tmp_path)
    assert any(line.split()[:3] == ["kanban", "0.3.0", DIST]
               for line in table.stdout.splitlines()), table.stdout


def test_third_party_mode_is_invisible_without_its_site(env, tmp_path):
    del env["PYTHONPATH"]
    result = _pneuma(["modes", "--json"], env, tmp_path)
    assert "kanban" not in {m["name"] for m in json.loads(result.stdout)["modes"]}


def test_skill_install_of_a_third_party_mode(installed_site, env, tmp_path):
    workspace = tmp_path / "board"
    result = _pneuma(["skill", "install", "--mode", "kanban", "-w", str(workspace),
                      "--param", "boardName=Roadmap", "--no-prompt"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "kanban skill installed" in result.stderr

    assert json.loads((workspace / "board.json").read_text())["columns"][0]["name"] == "Backlog"
    skill = workspace / ".claude" / "skills" / "acme-kanban"
    assert (skill / "SKILL.md").read_text().startswith(
        "---\nname: acme-kanban\ndescription: Use when editing the kanban board in board.json.\n"
        "---\n# Working on Roadmap\n")
    assert (skill / "reference" / "columns.md").read_text() == "Columns: Backlog, Doing, Done.\n"

    claude = (workspace / "CLAUDE.md").read_text()
    assert "<!-- pneuma:start -->\n## Pneuma Kanban board Mode\n" in claude
    assert "The person sees the board's columns side by side." in claude
    assert "<!-- pneuma:viewer-api:start -->" in claude
    assert "| `focus-card` | Scroll to a card and highlight it | card: string (required)" in claude
    assert "`/triage` — **Triage the backlog**" in claude
    assert (workspace / ".claude" / "commands" / "triage.md").is_file()

    check = _pneuma(["skill", "install", "--mode", "kanban", "-w", str(workspace), "--check"],
                    env, tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
