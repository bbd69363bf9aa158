"""Which workspace paths a viewer watches: the mode's watch globs minus its
ignore globs and the host's own ignores, and which of them are text. Used
by the file watcher, the checkpoint store and the file routes alike."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from wcmatch import glob as wcglob

# ".<name>.<8 hex>.tmp": the temp files of Pneuma's own atomic writes
# (pneuma.core.files.atomic_write_bytes: the file API, the tools, the skill
# installer, the session state); "*.pneuma-tmp": the native runtime's. They
# exist for an instant and would otherwise reach the viewer as files of their
# own, or as deletions.
# The files an agent reads its instructions from (Claude Code: CLAUDE.md,
# Codex: AGENTS.md; pneuma.workspace.skill writes Pneuma's sections into
# them). They are the agent's, not the person's work: no viewer lists them,
# no export includes them, no scaffold clears them (docs/api.md). The one
# list; modes read it as pneuma.api.AGENT_INSTRUCTION_FILES.
AGENT_INSTRUCTION_FILES: tuple[str, ...] = ("CLAUDE.md", "AGENTS.md")
ALWAYS_IGNORED = (".git/**", ".pneuma/**", ".claude/**", *AGENT_INSTRUCTION_FILES, "node_modules/**",
                  "**/node_modules/**", "**/.git/**", "**/__pycache__/**", "**/.DS_Store",
                  "**/.*.????????.tmp", "**/*.pneuma-tmp")
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE

TEXT_SUFFIXES = {
    ".md", ".markdown", ".txt", ".html", ".htm", ".css", ".js", ".mjs", ".json", ".excalidraw",
    ".svg", ".tex", ".bib", ".csv", ".tsv", ".xml", ".yaml", ".yml", ".toml", ".py", ".ts",
    ".sty", ".cls",
}


class FileFilter:
    """Which workspace paths the viewer watches: ``watch`` minus ``ignore``
    and the host's own ignores. The globs are compiled once: a checkpoint
    asks this of thousands of files, and compiling them per call cost more
    than the stat."""

    def __init__(self, watch: Iterable[str], ignore: Iterable[str], text_suffixes: Iterable[str] = ()):
        self.watch = list(watch) or ["**/*"]
        self.ignore = list(ALWAYS_IGNORED) + list(ignore)
        # the mode's own text formats (manifest viewer.textSuffixes), sent as text too
        self.text_suffixes = frozenset(s.lower() for s in text_suffixes)
        self._watch = wcglob.compile(self.watch, flags=GLOB_FLAGS)
        self._ignore = wcglob.compile(self.ignore, flags=GLOB_FLAGS)

    def __call__(self, rel: str) -> bool:
        return not self._ignore.match(rel) and bool(self._watch.match(rel))

    def is_text(self, rel: str) -> bool:
        return is_text_path(rel) or Path(rel).suffix.lower() in self.text_suffixes


def is_text_path(path: str) -> bool:
    return Path(path).suffix.lower() in TEXT_SUFFIXES
