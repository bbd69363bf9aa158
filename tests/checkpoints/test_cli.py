"""`pneuma checkpoints list|restore`: text, JSON and error lines, invoked
through the click group itself (the lead registers it on `pneuma`)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pneuma.checkpoints import Checkpoints
from pneuma.cli.checkpoints import checkpoints
from tests.checkpoints.test_restore import two_turns
from tests.checkpoints.test_store import write


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(checkpoints, list(args), input=input)


def test_list_text_and_json(tmp_path: Path) -> None:
    two_turns(tmp_path)
    text = run("list", "-w", str(tmp_path))
    assert text.exit_code == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["TURN", "TIME", "CHANGES", "MESSAGE"]
    assert lines[1].startswith("1 ") and "+1 ~1 -1" in lines[1] and "turn one" in lines[1]
    assert lines[2].startswith("2 ") and "+0 ~1 -0" in lines[2] and "turn two" in lines[2]
    data = json.loads(run("list", "-w", str(tmp_path), "--json").stdout)
    first = data["checkpoints"][0]
    assert first["ref"] == "1" and first["message"] == "turn one"
    assert first["changes"] == {"added": ["c/new.md"], "modified": ["a.md"],
                                "removed": ["b.md"]}


def test_list_of_a_workspace_without_checkpoints(tmp_path: Path) -> None:
    result = run("list", "-w", str(tmp_path))
    assert result.exit_code == 0 and "No checkpoints" in result.stdout
    assert json.loads(run("list", "-w", str(tmp_path), "--json").stdout)["checkpoints"] == []


def test_restore_dry_run_then_yes(tmp_path: Path) -> None:
    two_turns(tmp_path)
    dry = run("restore", "1", "-w", str(tmp_path), "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert "would change 3 file(s) (dry run" in dry.stdout
    assert "  restore   a.md" in dry.stdout and "  recreate  b.md" in dry.stdout
    assert "  delete    c/new.md" in dry.stdout
    assert (tmp_path / "a.md").read_text() == "agent a 2"
    done = run("restore", "1", "-w", str(tmp_path), "--yes")
    assert done.exit_code == 0, done.stderr
    assert "Restored 3 file(s)." in done.stdout
    assert f"pneuma checkpoints restore u1 -w {tmp_path.resolve()}" in done.stdout
    assert (tmp_path / "a.md").read_text() == "original a"


def test_restore_asks_first(tmp_path: Path) -> None:
    two_turns(tmp_path)
    declined = run("restore", "1", "-w", str(tmp_path), input="n\n")
    assert declined.exit_code == 1 and "Nothing changed." in declined.stderr
    assert (tmp_path / "a.md").read_text() == "agent a 2"
    accepted = run("restore", "1", "-w", str(tmp_path), input="y\n")
    assert accepted.exit_code == 0 and (tmp_path / "a.md").read_text() == "original a"


def test_restore_json_and_conflicts(tmp_path: Path) -> None:
    two_turns(tmp_path)
    write(tmp_path, "a.md", "by hand")
    dry = json.loads(run("restore", "1", "-w", str(tmp_path), "--dry-run", "--json").stdout)
    assert dry["conflicts"] == ["a.md"] and dry["dryRun"] is True
    text = run("restore", "1", "-w", str(tmp_path), "--dry-run")
    assert "a.md  CONFLICT: changed by hand after the turn" in text.stdout
    refused = run("restore", "1", "-w", str(tmp_path), "--yes")
    assert refused.exit_code == 2
    assert refused.stderr.startswith("pneuma: error: 1 file(s) changed by hand")
    assert len(refused.stderr.splitlines()) == 1
    assert (tmp_path / "a.md").read_text() == "by hand"
    kept = json.loads(run("restore", "1", "-w", str(tmp_path), "--json",
                          "--keep-conflicts").stdout)
    assert kept["keptConflicts"] == ["a.md"] and kept["undo"] == "u1"
    assert (tmp_path / "b.md").read_text() == "original b"


def test_error_lines(tmp_path: Path) -> None:
    Checkpoints(tmp_path).record("one")
    for args, expected in [
        (("restore", "9", "-w", str(tmp_path)), "pneuma: error: no checkpoint 9 in "),
        (("restore", "x/../1", "-w", str(tmp_path)), "pneuma: error: 'x/../1' is not a "),
        (("list", "-w", str(tmp_path / "missing")), "pneuma: error: "),
    ]:
        result = run(*args)
        assert result.exit_code == 2, args
        assert result.stderr.startswith(expected) and len(result.stderr.splitlines()) == 1


def test_as_a_process(tmp_path: Path) -> None:
    import subprocess
    import sys

    two_turns(tmp_path)
    code = "from pneuma.cli.checkpoints import checkpoints; checkpoints(prog_name='pneuma')"
    done = subprocess.run([sys.executable, "-c", code, "restore", "1", "-w", str(tmp_path),
                           "--yes"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "b.md").read_text() == "original b"
    refused = subprocess.run([sys.executable, "-c", code, "restore", "7", "-w",
                              str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr == f"pneuma: error: no checkpoint 7 in {tmp_path.resolve()}\n"
