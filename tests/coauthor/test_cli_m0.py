"""M0 without a model, through the real `pneuma coauthor` subcommands:
create a task, propose a patch by hand, accept it, see the file change and
replay the log; and the drift scenario where the person edits first."""

from __future__ import annotations

from pathlib import Path

from pneuma_coauthor.domain.patches import make_diff

from .conftest import INTRO, run_cli

INTRO_PATH = "sections/intro.tex"


def test_m0_loop(paper: Path):
    out = run_cli(paper, "task", "create", "Fix", "the", "agreement", "error", "--file", f"{INTRO_PATH}:4-4", real=True).stdout
    task_id = out.strip().splitlines()[-1]
    assert task_id == "t-001"
    listed = run_cli(paper, "task", "list").stdout
    assert "t-001" in listed and "open" in listed and f"{INTRO_PATH}:4-4" in listed

    diff = make_diff(INTRO_PATH, INTRO, INTRO.replace("This paper argue", "This paper argues"))
    proposal = run_cli(paper, "patch", "propose", task_id, INTRO_PATH, "--summary", "subject-verb agreement", stdin=diff).stdout
    patch_id = proposal.strip().splitlines()[-1]
    assert patch_id == "t-001-p1"
    assert (paper / INTRO_PATH).read_text("utf-8") == INTRO  # proposing writes nothing
    stored = (paper / ".pneuma/coauthor/patches/t-001-p1.diff").read_text("utf-8")
    assert stored.startswith("# coauthor-patch 1\n# patchId: t-001-p1\n# taskId: t-001\n# summary: subject-verb agreement\n")
    assert "awaiting_review" in run_cli(paper, "task", "list").stdout

    accepted = run_cli(paper, "patch", "accept", task_id, "latest").stdout
    assert "t-001-p1 applied" in accepted
    assert "This paper argues that" in (paper / INTRO_PATH).read_text("utf-8")
    assert "no open tasks" in run_cli(paper, "task", "list").stdout

    log = run_cli(paper, "log", "replay", real=True).stdout.splitlines()
    types = [line.split()[0] for line in log]
    assert types == ["TaskCreated", "TaskRouted", "PatchProposed", "PatchAccepted", "PatchApplied",
                     "ArtifactChanged", "BuildChecked", "TaskCompleted"]
    assert all(" t-001 " in line for line in log)
    assert "skipped" in log[types.index("BuildChecked")]  # latexmk off in this workspace: not an error
    assert run_cli(paper, "log", "replay", "t-002").stdout == ""


def test_drift_between_proposal_and_accept_never_overwrites(paper: Path):
    task_id = run_cli(paper, "task", "create", "Shorten the first claim", "--file", f"{INTRO_PATH}:3").stdout.split()[-1]
    diff = make_diff(INTRO_PATH, INTRO, INTRO.replace("silently lose the author's trust", "lose trust"))
    run_cli(paper, "patch", "propose", task_id, INTRO_PATH, stdin=diff)
    # The person edits the same file meanwhile (another sentence entirely).
    edited = INTRO.replace("A patch can be read", "A patch is read")
    (paper / INTRO_PATH).write_text(edited, encoding="utf-8")

    result = run_cli(paper, "patch", "accept", task_id, "latest", check=False)
    assert result.returncode == 2
    assert "NOT applied" in result.stdout and f"drift {INTRO_PATH}" in result.stdout
    assert (paper / INTRO_PATH).read_text("utf-8") == edited  # their edit stands, untouched
    log = run_cli(paper, "log", "replay", task_id).stdout
    assert "TaskNeedsRebase" in log and "PatchApplied" not in log
    shown = run_cli(paper, "task", "show", task_id).stdout
    assert '"needsRebase": true' in shown and '"needs_rebase"' in shown

    # A patch against the new text goes through, superseding the stale one.
    rebased = make_diff(INTRO_PATH, edited, edited.replace("silently lose the author's trust", "lose trust"))
    patch_id = run_cli(paper, "patch", "propose", task_id, INTRO_PATH, "--supersedes", "t-001-p1", stdin=rebased).stdout.split()[-1]
    assert patch_id == "t-001-p2"
    run_cli(paper, "patch", "accept", task_id, patch_id)
    final = (paper / INTRO_PATH).read_text("utf-8")
    assert "lose trust" in final and "A patch is read" in final


def test_bad_input_is_refused_with_a_message(paper: Path):
    task_id = run_cli(paper, "task", "create", "x").stdout.split()[-1]
    bad = run_cli(paper, "patch", "propose", task_id, INTRO_PATH, stdin="not a diff\n", check=False)
    assert bad.returncode == 1 and "not a usable diff" in bad.stderr
    stale = make_diff(INTRO_PATH, INTRO.replace("Writing", "Editing"), INTRO)
    wrong = run_cli(paper, "patch", "propose", task_id, INTRO_PATH, stdin=stale, check=False)
    assert wrong.returncode == 1 and "does not apply" in wrong.stderr
    assert run_cli(paper, "patch", "accept", "t-404", "latest", check=False).returncode == 1
    outside = run_cli(paper, "task", "create", "y", "--file", "../secret.tex", check=False)
    assert outside.returncode == 1
