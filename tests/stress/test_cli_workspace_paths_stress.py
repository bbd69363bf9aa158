"""Stress for issue 25, items 15-17: many workspace paths that cannot be
used (missing, a file, below a file, deeper below one), each given to every
command that takes `-w`, in process through click; each answer is one
`pneuma: error:` line with status 1 or 2, never an exception, and nothing
is written. Then workspaces of one mode given to `init` and `skill install`
of the other, which refuse and leave every file as it was."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from pneuma.cli import cli
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

COMMANDS = [
    ["export", "--format", "html"], ["export", "--mode", "doc", "--list"],
    ["checkpoints", "list"], ["conversations", "list"], ["tool", "--mode", "doc", "--list"],
    ["skill", "install", "--mode", "doc", "--check"],
]
# These make a missing workspace: only a path a file stands in the way of is refused.
MAKING = [["init", "--mode", "doc", "--no-prompt"],
          ["skill", "install", "--mode", "doc", "--no-prompt"]]


def _bad_path(root: Path, rng: random.Random, index: int) -> Path:
    base = root / f"case{index}"
    kind = rng.choice(["missing", "file", "below", "deeper"])
    if kind == "missing":
        return base / "not" / "there" if rng.random() < 0.5 else base
    base.parent.mkdir(parents=True, exist_ok=True)
    base.write_text("a file\n")
    if kind == "file":
        return base
    return base / "sub" if kind == "below" else base / "a" / "b" / "c"


def _only_missing(path: Path, root: Path) -> bool:
    """No file stands where ``path`` or one of its parents should be."""
    return not any(p.is_file() for p in (path, *path.parents) if p != root)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_unusable_workspace_paths_are_one_line_everywhere(tmp_path, monkeypatch):
    monkeypatch.setenv("PNEUMA_LOAD_PLUGINS", "doc,slide")
    rng = random.Random(25)
    runner = CliRunner()
    tried = 0
    for index in range(40):
        path = _bad_path(tmp_path / "bad", rng, index)
        before = _tree(tmp_path)
        for command in COMMANDS + ([] if _only_missing(path, tmp_path) else MAKING):
            result = runner.invoke(cli, [*command, "-w", str(path)])
            assert result.exit_code in (1, 2), (command, path, result.output)
            assert isinstance(result.exception, SystemExit), (command, path, result.output)
            errors = [line for line in result.output.splitlines()
                      if line.startswith("pneuma: error: ")]
            assert len(errors) == 1 and "Traceback" not in result.output, result.output
            tried += 1
        assert _tree(tmp_path) == before, path
    record("25.15-16 workspace paths", f"{count(tried)} commands on 40 unusable workspace "
           "paths: each one `pneuma: error:` line, nothing written")


def test_another_modes_workspace_is_refused_by_init_and_skill_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PNEUMA_LOAD_PLUGINS", "doc,slide")
    runner = CliRunner()
    refused = 0
    for index, (first, other) in enumerate([("doc", "slide"), ("slide", "doc")] * 3):
        workspace = tmp_path / f"ws{index}"
        how = ["init"] if index % 2 else ["skill", "install"]
        made = runner.invoke(cli, [*how, "--mode", first, "--no-prompt", "-w", str(workspace)])
        assert made.exit_code == 0, made.output
        before = _tree(workspace)
        for command in (["init"], ["skill", "install"], ["skill", "install", "--check"]):
            result = runner.invoke(cli, [*command, "--mode", other, "--no-prompt",
                                         "-w", str(workspace)])
            assert result.exit_code == 2, (command, result.output)
            assert f"is a {first} workspace" in result.output and "--switch-mode" in result.output
            assert _tree(workspace) == before
            refused += 1
    record("25.17 other mode's workspace", f"{count(refused)} `init`/`skill install` of "
           "another mode refused, every file unchanged")
