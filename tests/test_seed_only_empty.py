"""Starter files go unasked only into an empty folder or one of that mode
(issue 25, item 18): `pneuma run --mode slide` in a folder of the person's
own files asks in a terminal, and without one refuses with the way out,
leaving the folder exactly as it was."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

from click.testing import CliRunner

from tests.pneuma_process import PNEUMA, no_server_left, start_run  # noqa: F401 (autouse fixture)

SLIDE_SEEDS = {"manifest.json", "theme.css", "slides"}


def _listing(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _their_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "budget.csv").write_text("a,b\n1,2\n")
    return folder


def _run_here(folder: Path, *extra: str, stdin: int | None = subprocess.DEVNULL,
              ) -> subprocess.Popen[bytes]:
    """`pneuma run --mode slide` with no --workspace, in ``folder``."""
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([PNEUMA, "run", "--mode", "slide", "--backend", "none",
                             "--no-open", "--port", "0", *extra],
                            cwd=folder, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


def _read_until(fd: int, wanted: bytes, proc: subprocess.Popen[bytes], timeout: float = 30.0,
                ) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while wanted not in seen:
        left = deadline - time.monotonic()
        assert left > 0 and proc.poll() is None or wanted in seen, seen.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
    assert wanted in seen, seen.decode(errors="replace")
    return seen


def test_without_a_terminal_a_folder_of_other_files_is_refused_and_left_as_it_was(
        tmp_path: Path) -> None:
    folder = _their_folder(tmp_path)
    before = _listing(folder)
    proc = _run_here(folder)
    _, err = proc.communicate(timeout=60)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 2
    assert len(lines) == 1 and lines[0].startswith("pneuma: error: "), lines
    assert "budget.csv, notes.txt" in lines[0] and "--workspace" in lines[0]
    assert "--seed" in lines[0]
    assert _listing(folder) == before
    assert sorted(p.name for p in folder.iterdir()) == ["budget.csv", "notes.txt"]


def test_in_a_terminal_the_person_is_asked_and_no_leaves_the_folder_as_it_was(
        tmp_path: Path) -> None:
    folder = _their_folder(tmp_path)
    before = _listing(folder)
    leader, follower = pty.openpty()
    proc = _run_here(folder, stdin=follower)
    os.close(follower)
    assert proc.stderr is not None
    question = _read_until(proc.stderr.fileno(), b"[y/N]", proc).decode()
    assert "budget.csv, notes.txt" in question and "beside them?" in question
    os.write(leader, b"n\n")
    _, rest = proc.communicate(timeout=30)
    os.close(leader)
    assert proc.returncode == 1
    assert "nothing seeded" in rest.decode() and "ready" not in rest.decode()
    assert _listing(folder) == before and not (folder / ".pneuma").exists()


def test_in_a_terminal_yes_seeds_beside_them(tmp_path: Path) -> None:
    folder = _their_folder(tmp_path)
    leader, follower = pty.openpty()
    proc = _run_here(folder, stdin=follower)
    os.close(follower)
    assert proc.stderr is not None
    _read_until(proc.stderr.fileno(), b"[y/N]", proc)
    # Yes, then the mode's params at their defaults.
    os.write(leader, b"y\n" + b"\n" * 8)
    assert proc.stdout is not None
    _read_until(proc.stdout.fileno(), b"[pneuma] ready", proc)
    proc.terminate()
    proc.wait(30)
    os.close(leader)
    assert SLIDE_SEEDS <= {p.name for p in folder.iterdir()}
    assert (folder / "notes.txt").read_text() == "my notes\n"


def test_seed_seeds_beside_them_without_asking(tmp_path: Path) -> None:
    folder = _their_folder(tmp_path)
    proc = start_run(folder, "slide", "--port", "0", "--seed")
    assert proc.stdout is not None
    _read_until(proc.stdout.fileno(), b"[pneuma] ready", proc)  # type: ignore[arg-type]
    proc.terminate()
    proc.wait(30)
    assert SLIDE_SEEDS <= {p.name for p in folder.iterdir()}


def test_an_empty_folder_or_one_of_only_hidden_and_agent_files_is_seeded_unasked(
        tmp_path: Path) -> None:
    from pneuma.cli import cli

    for name, files in [("empty", {}), ("hidden", {".gitignore": "x\n", "CLAUDE.md": "# me\n",
                                                   ".git/HEAD": "ref\n"})]:
        folder = tmp_path / name
        for rel, text in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
        result = CliRunner().invoke(cli, ["init", "--mode", "slide", "-w", str(folder),
                                          "--no-prompt"])
        assert result.exit_code == 0, result.output
        assert SLIDE_SEEDS <= {p.name for p in folder.iterdir()}, name


def test_a_folder_of_that_mode_is_seeded_again_unasked(tmp_path: Path) -> None:
    from pneuma.cli import cli

    folder = tmp_path / "deck"
    assert CliRunner().invoke(cli, ["init", "--mode", "slide", "-w", str(folder)]).exit_code == 0
    for path in ("manifest.json", "theme.css"):
        (folder / path).unlink()
    for slide in (folder / "slides").iterdir():
        slide.unlink()
    (folder / "draft.txt").write_text("an idea\n")
    result = CliRunner().invoke(cli, ["init", "--mode", "slide", "-w", str(folder), "--no-prompt"])
    assert result.exit_code == 0, result.output
    assert (folder / "manifest.json").is_file()


def test_init_and_skill_install_in_a_folder_of_other_files(tmp_path: Path) -> None:
    from pneuma.cli import cli

    folder = _their_folder(tmp_path)
    refused = CliRunner().invoke(cli, ["init", "--mode", "slide", "-w", str(folder),
                                       "--no-prompt"])
    assert refused.exit_code == 2 and "--seed" in refused.output
    assert sorted(p.name for p in folder.iterdir()) == ["budget.csv", "notes.txt"]
    # The skill is skill install's work: it seeds nothing beside them, and says no error.
    installed = CliRunner().invoke(cli, ["skill", "install", "--mode", "slide", "-w",
                                         str(folder), "--no-prompt"])
    assert installed.exit_code == 0, installed.output
    assert not (folder / "manifest.json").exists() and (folder / "CLAUDE.md").is_file()
    seeded = CliRunner().invoke(cli, ["init", "--mode", "slide", "-w", str(folder),
                                      "--no-prompt", "--seed"])
    assert seeded.exit_code == 0, seeded.output
    assert (folder / "manifest.json").is_file() and (folder / "notes.txt").is_file()


def test_new_mode_warns_of_a_built_in_name_and_its_next_lines_name_a_workspace(
        tmp_path: Path) -> None:
    from pneuma.cli import cli

    result = CliRunner().invoke(cli, ["new-mode", "--no-input", "-o", str(tmp_path),
                                      "name=slide"])
    assert result.exit_code == 0, result.output
    assert "a built-in mode is named 'slide'" in result.output
    run_line = next(line for line in result.output.splitlines() if "pneuma run" in line)
    assert "--workspace" in run_line or " -w " in run_line
