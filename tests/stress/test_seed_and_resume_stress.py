"""Issue 25, items 18 and 19 under stress.

Seeding: random folders (hidden files, the agent's instruction files, the
person's own files, nested, the mode's own) go through the same checks
`pneuma run` and `pneuma init` use; a folder of the person's files is never
seeded unasked and a refusal leaves it byte for byte as it was.

Resuming: random runs of backends and looks over one workspace's
session.json; each backend always resumes the last session it ran, and a
look never leaves a session of its own behind."""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import pytest

from pneuma.host.registry import get_mode
from pneuma.server.persistence import load_session, peek_session_id, save_session
from pneuma.startup.start_checks import StartProblem, settle_seeding
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

FOLDERS = 120
RUNS = 400
HIDDEN = [".gitignore", ".git/HEAD", ".env", ".vscode/settings.json", ".DS_Store"]
AGENT_FILES = ["CLAUDE.md", "AGENTS.md", ".claude/skills/x/SKILL.md", ".mcp.json"]
THEIRS = ["notes.txt", "budget.csv", "src/main.py", "photos/a.jpg", "README"]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_random_folders_are_seeded_unasked_only_when_empty_of_the_persons_files(
        tmp_path: Path) -> None:
    rng = random.Random(25_18)
    mode = get_mode("slide")
    seeded = refused = 0
    for n in range(FOLDERS):
        folder = tmp_path / f"f{n}"
        folder.mkdir()
        names = rng.sample(HIDDEN, rng.randint(0, 3)) + rng.sample(AGENT_FILES, rng.randint(0, 2))
        theirs = rng.sample(THEIRS, rng.choice([0, 0, 1, 3]))
        for rel in names + theirs:
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(rng.randbytes(rng.randint(0, 64)))
        before = _snapshot(folder)
        try:
            allowed = settle_seeding(mode, folder, "ask", None)
        except StartProblem as problem:
            refused += 1
            assert theirs, (names, problem.message)
            assert "--seed" in problem.message and "--workspace" in problem.message
            assert all(Path(t).name in problem.message or "more" in problem.message
                       for t in sorted(theirs)[:3])
        else:
            seeded += 1
            assert allowed and not theirs, (names, theirs)
        assert _snapshot(folder) == before
        # --seed always may; skill install's never seeds beside them.
        assert settle_seeding(mode, folder, "always", None) is True
        assert settle_seeding(mode, folder, "never-beside", None) is (not theirs)
    record("25.18 seeding", f"{count(FOLDERS)} random folders: {count(seeded)} seeded unasked "
           f"(empty but for hidden and agent files), {count(refused)} refused with the way out, "
           "0 changed by a refusal")


def test_random_runs_each_backend_resumes_its_own_session(tmp_path: Path) -> None:
    rng = random.Random(25_19)
    backends = ["claude-code", "codex", "native", "none"]
    own: dict[str, str] = {}  # backend -> the session id it last ran
    last_run: str | None = None
    resumed = 0
    for _ in range(RUNS):
        backend = rng.choice(backends)
        peeked, peek_resumed = peek_session_id(tmp_path, "slide", backend)
        stored = load_session(tmp_path, "slide", backend, new_session_id=peeked)
        assert stored.session_id == peeked and stored.resumed == peek_resumed
        if backend == "none":
            # A look shows what ran last, whatever it was.
            assert stored.session_id == (last_run or peeked)
        elif backend in own:
            assert stored.session_id == own[backend], backend
        resumed += stored.resumed
        agent = None if backend == "none" else (stored.agent_session_id or f"agent-{uuid.uuid4()}")
        save_session(tmp_path, session_id=stored.session_id, mode="slide", backend=backend,
                     agent_session_id=agent if backend != "none" else stored.agent_session_id,
                     last_seq=stored.last_seq + 1)
        if backend != "none":
            own[backend] = stored.session_id
        last_run = stored.session_id
    record("25.19 resume per backend", f"{count(RUNS)} random runs of 3 backends and looks: "
           f"{count(resumed)} resumed, each backend always its own last session, "
           "each look the last run's")
