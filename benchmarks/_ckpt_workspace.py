"""The workspace of ``bench_checkpoints.py``, the files each turn changes,
and the shadow git repository it is measured against (not a benchmark).

The workspace is a slide deck (the slide mode's seeds) plus ``files``
generated files under ``assets/`` (the slide mode watches ``assets/**/*``,
so the checkpoints record them all), ``megabytes`` in all:

- 30 % text files (``assets/notes/nNNNN.md``, about 16 KB of words each:
  compressible, edited a line at a time);
- 10 % small binaries (``assets/icons/iNNNN.bin``, 64 KB of random bytes:
  rewritten whole);
- the rest large binaries (``assets/media/mNNNN.bin``, random bytes, never
  changed) holding what is left of the size.

Turn ``t`` (from 1) edits two text files and rewrites one small binary,
taken round-robin, so that the last ``span`` turns touch ``3 × span``
distinct files (the rewind's files).

The shadow git repository is what upstream Pneuma keeps: a ``GIT_DIR`` of
its own with the workspace as its work tree, ``git add -A && git commit``
at each turn's end, Pneuma's own folders excluded.
"""

from __future__ import annotations

import os
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

TEXT_SHARE = 0.3
SMALL_BINARY_SHARE = 0.1
TEXT_BYTES = 16 * 1024
SMALL_BINARY_BYTES = 64 * 1024
WORDS = ("the of and to in is that for it as with was on be at by this had not are but from or "
         "have an they which one you were her all she there would their we him been has when "
         "who will more no if out so said what up its about into than them can only other new "
         "some could time these two may then do first any my now such like our over man me "
         "even most made after also did many before must through back years where much your "
         "way well down should because each just those people how too little state good very "
         "make world still own see men work long get here between both life being under never "
         "day same another know while last might us great old year off come since against go "
         "came right used take three").split()


@dataclass(frozen=True)
class Layout:
    """The generated files' relative paths."""

    texts: list[str]
    small_binaries: list[str]
    large_binaries: list[str]

    def turn_files(self, turn: int) -> tuple[list[str], list[str]]:
        """(text files to edit, binaries to rewrite) in turn ``turn`` (from 1)."""
        i = turn - 1
        texts = [self.texts[(2 * i) % len(self.texts)], self.texts[(2 * i + 1) % len(self.texts)]]
        return texts, [self.small_binaries[i % len(self.small_binaries)]]

    def max_span(self) -> int:
        """How many consecutive turns touch only distinct files."""
        return min(len(self.texts) // 2, len(self.small_binaries))


def layout(files: int) -> Layout:
    n_text = max(2, int(files * TEXT_SHARE))
    n_small = max(1, int(files * SMALL_BINARY_SHARE))
    n_large = max(1, files - n_text - n_small)
    return Layout(texts=[f"assets/notes/n{i:04d}.md" for i in range(n_text)],
                  small_binaries=[f"assets/icons/i{i:04d}.bin" for i in range(n_small)],
                  large_binaries=[f"assets/media/m{i:04d}.bin" for i in range(n_large)])


def text_of(size: int, rng: random.Random) -> str:
    lines, total = [], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def generate(workspace: Path, files: int, megabytes: float, seed: int = 27) -> Layout:
    """Write the generated files into ``workspace`` (its seeds come from the
    slide mode when ``pneuma run`` first starts there)."""
    rng = random.Random(seed)
    plan = layout(files)
    total = int(megabytes * 1024 * 1024)
    left = total - len(plan.texts) * TEXT_BYTES - len(plan.small_binaries) * SMALL_BINARY_BYTES
    large = max(4096, left // len(plan.large_binaries))
    for folder in ("assets/notes", "assets/icons", "assets/media"):
        (workspace / folder).mkdir(parents=True, exist_ok=True)
    for path in plan.texts:
        (workspace / path).write_text(text_of(TEXT_BYTES, rng), encoding="utf-8")
    for path in plan.small_binaries:
        (workspace / path).write_bytes(os.urandom(SMALL_BINARY_BYTES))
    for path in plan.large_binaries:
        # Sizes vary around the mean (a real asset folder is not uniform).
        (workspace / path).write_bytes(os.urandom(int(large * rng.uniform(0.5, 1.5))))
    return plan


def disk_bytes(root: Path) -> int:
    """Bytes ``root`` occupies on disk (allocated blocks, as ``du``), links not followed."""
    total = 0
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


class ShadowGit:
    """A git repository beside the workspace whose work tree is the workspace."""

    EXCLUDE = ".pneuma/\n.claude/\nCLAUDE.md\n.mcp.json\n"

    def __init__(self, git_dir: Path, workspace: Path) -> None:
        self.git_dir = git_dir
        self.workspace = workspace
        self.env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(workspace),
                    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@127.0.0.1",
                    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@127.0.0.1",
                    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", *args], env=self.env, cwd=self.workspace, check=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return done.stdout

    def init(self) -> None:
        self.git("init", "-q")
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.git_dir / "info" / "exclude").write_text(self.EXCLUDE)

    def commit(self, message: str) -> str:
        """Everything in the work tree as a new commit; its hash."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def checkout(self, commit: str, paths: list[str]) -> None:
        self.git("checkout", commit, "--", *paths)

    def differing(self, commit: str) -> list[str]:
        """Work-tree files that differ from ``commit`` (untracked ones aside)."""
        return [p for p in self.git("diff", "--name-only", commit).splitlines() if p]

    def size(self) -> int:
        return disk_bytes(self.git_dir)
