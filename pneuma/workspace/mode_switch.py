"""A workspace belongs to one mode.

Running another mode on it rewrites CLAUDE.md, replaces the skill and the
slash commands, and starts a new conversation, so `pneuma run` refuses
unless asked with ``--switch-mode``. A switch parks the old mode's
conversation (``SESSION_FILES``: ``session.json``, the conversation log and
its SQLite side files) in ``.pneuma/sessions/<mode>/`` and brings back the
new mode's parked one, if any: switching back resumes where that mode's
conversation stopped. The old mode's installed skill folder goes (the
installer then writes the new mode's skill, CLAUDE.md sections and
commands, and drops the old commands).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tomllib
from pathlib import Path, PurePosixPath

from pneuma.core.state_files import ensure_dir

STATE_DIR = ".pneuma"
# One mode's conversation: its ids, and its log (``history.json``, or the
# append-only ``conversation.db`` with the ``-wal``/``-shm`` files SQLite
# keeps beside it; after a crash the last messages may be only in the
# ``-wal``, so the three always move together).
SESSION_FILES = (
    "session.json",
    "history.json",
    "conversation.db",
    "conversation.db-wal",
    "conversation.db-shm",
)
PARKED_DIR = ".pneuma/sessions"
INSTALL_STATE = ".pneuma/installed.json"
# `pneuma init` records the mode here (pneuma.workspace.params.record_mode).
CONFIG_FILE = ".pneuma/config.toml"


def workspace_mode(workspace: Path) -> str | None:
    """The mode the workspace was last run (or installed, or initialised) with, if any."""
    for rel in (f"{STATE_DIR}/session.json", INSTALL_STATE, CONFIG_FILE):
        data = _read_record(workspace / rel)
        if isinstance(data, dict) and isinstance(data.get("mode"), str) and data["mode"]:
            return data["mode"]
    return None


def _read_record(path: Path) -> object:
    """A JSON or TOML state file's content; None when it is missing or broken."""
    try:
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError):  # TOMLDecodeError is a ValueError
        return None


def switch_refusal(workspace: Path, mode: str) -> str | None:
    """Why running ``mode`` on ``workspace`` needs ``--switch-mode``, or None."""
    current = workspace_mode(workspace)
    if current is None or current == mode:
        return None
    return (f"{workspace} is a {current} workspace; running the {mode} mode would replace "
            f"its CLAUDE.md, skill, commands and conversation. Run it with --mode {current}, "
            f"or add --switch-mode to switch (the {current} conversation is kept and resumes "
            f"when you switch back)")


def switch_sessions(workspace: Path, to_mode: str) -> str | None:
    """Park the current mode's conversation and restore ``to_mode``'s;
    returns the mode switched from (None when there was nothing to do)."""
    current = workspace_mode(workspace)
    if current is None or current == to_mode:
        return None
    state = workspace / STATE_DIR
    parked_old = workspace / PARKED_DIR / current
    ensure_dir(parked_old)  # never a parking folder that is a link
    _move_session(state, parked_old)
    parked_new = workspace / PARKED_DIR / to_mode
    if parked_new.is_dir():
        _move_session(parked_new, state)
    remove_old_skill(workspace)
    return current


def _move_session(source: Path, target: Path) -> None:
    """Move the session files in ``source`` to ``target``. A name that
    ``source`` lacks is removed from ``target``, so the set there is exactly
    the one moved: a ``-wal`` left over from another database (say, by a
    switch a crash interrupted) must never be replayed into this one."""
    for name in SESSION_FILES:
        if (source / name).exists():
            os.replace(source / name, target / name)
        else:
            (target / name).unlink(missing_ok=True)


def remove_old_skill(workspace: Path) -> None:
    """Delete the skill folder the last install recorded (only ever a
    folder under ``.claude/skills/``)."""
    try:
        data = json.loads((workspace / INSTALL_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    rel = data.get("skill") if isinstance(data, dict) else None
    if not isinstance(rel, str):
        return
    parts = PurePosixPath(rel).parts
    if len(parts) != 3 or parts[:2] != (".claude", "skills") or parts[2] in ("", ".", ".."):
        return
    # Not one of .claude, .claude/skills or the folder may be a link: a
    # `.claude` linked to ~/.claude would make this delete the person's own skill.
    walked = workspace
    for part in parts:
        walked = walked / part
        try:
            if not stat.S_ISDIR(walked.lstat().st_mode):
                return
        except OSError:
            return
    shutil.rmtree(walked)
