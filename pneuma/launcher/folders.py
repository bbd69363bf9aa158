"""Which folders the launcher may serve or make a workspace of.

The launcher's routes take a folder path from the page; that path reaches
the file system only after ``folder_from_request`` has checked it (a NUL
byte, text that is not Unicode, a name or path longer than Linux allows are
each a 400 ``E_BAD_ARGS``, never an exception deep in ``os``), and a folder
is used only when ``refuse_foreign_folder`` accepts it: never a system
folder (docs/launcher.md, "Which folders"), never one another user owns.

What counts as a Pneuma workspace (``is_workspace``): its ``.pneuma/`` is
a real folder, not a link, and names the workspace's mode — in
``.pneuma/session.json`` (written by every session) or
``.pneuma/installed.json`` (written by the skill installer on the first
start) or ``.pneuma/config.toml`` (where `pneuma init` records it). "Open" serves only such a folder; anything else is "new".
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.workspace.mode_switch import workspace_mode

MAX_PATH_BYTES = 4095  # Linux's PATH_MAX, less the terminating NUL
MAX_NAME_BYTES = 255  # NAME_MAX: one folder name

# Folders of the operating system: neither they nor anything under them is
# ever a workspace (top-level names starting with "lib" count too: /lib32,
# /libx32...).
SYSTEM_TREES = frozenset({"bin", "boot", "dev", "etc", "proc", "run", "sbin", "sys", "usr",
                          "var"})
# Under /var only its temporary folder holds people's own folders.
SYSTEM_TREE_EXCEPTIONS = (Path("/var/tmp"),)
# Folders shared by many things: a workspace may live under them, never be
# one. Nor is any folder right under / or /home (system_folder_problem).
SHARED_FOLDERS = frozenset(Path(p) for p in (
    "/", "/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var/tmp"))


def _bad_path(message: str, reason: str) -> ToolError:
    return ToolError("E_BAD_ARGS", message, details={"field": "path", "reason": reason})


def checked_path_text(raw: Any) -> str:
    """``raw`` when it can name a file on Linux at all; else ``E_BAD_ARGS``
    with ``details.reason`` ``missing`` / ``nul`` / ``not_unicode`` /
    ``too_long``. Nothing on disk is looked at."""
    if not isinstance(raw, str) or not raw.strip():
        raise _bad_path("'path' must be the folder's path", "missing")
    if "\x00" in raw:
        raise _bad_path("the folder's path holds a NUL byte, which no file name can",
                        "nul")
    try:
        encoded = raw.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from "\\ud800" in JSON) is not a character.
        raise _bad_path("the folder's path is not valid Unicode text", "not_unicode") from None
    if len(encoded) > MAX_PATH_BYTES:
        raise _bad_path(f"the folder's path is {len(encoded):,} bytes long; Linux allows "
                        f"{MAX_PATH_BYTES:,}", "too_long")
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    if longest > MAX_NAME_BYTES:
        raise _bad_path(f"a folder name in the path is {longest:,} bytes long; Linux allows "
                        f"{MAX_NAME_BYTES}", "too_long")
    return raw


def folder_from_request(raw: Any) -> Path:
    """The absolute, resolved folder a request names (``~`` expanded)."""
    text = checked_path_text(raw).strip()
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # "~someone" who does not exist
        raise _bad_path(f"cannot use {text}: no such user's home folder", "unresolvable") from None
    if not path.is_absolute():
        raise _bad_path(f"'{text}' is not an absolute path (start it with / or ~)", "relative")
    try:
        return Path(os.path.normpath(path)).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise _bad_path(f"cannot use {text}: {exc}", "unresolvable") from None


def _home() -> Path:
    return Path.home().resolve()


def system_folder_problem(path: Path, home: Path | None = None) -> str | None:
    """Why ``path`` (resolved) is no place for a workspace, or None."""
    home = home or _home()
    if path == Path("/") or path == home:
        return None  # refuse_foreign_folder says these in its own words
    parts = path.parts
    top = parts[1] if len(parts) > 1 else ""
    in_system_tree = top in SYSTEM_TREES or top.startswith("lib")
    if in_system_tree and not any(path.is_relative_to(e) and path != e
                                  for e in SYSTEM_TREE_EXCEPTIONS):
        return f"{path} is a system folder (under /{top})"
    if path in SHARED_FOLDERS or path in home.parents:
        return f"{path} is a folder shared by many things"
    # The top of the file system is the system's to name (a workspace made
    # there as root would sit beside /etc), and /home/<name> is someone's home.
    if path.parent == Path("/"):
        return f"{path} would be a system folder (at the top of the file system)"
    if path.parent == Path("/home"):
        return f"{path} is a home folder"
    return None


def _nearest_existing(path: Path) -> tuple[Path, os.stat_result] | None:
    for candidate in (path, *path.parents):
        try:
            return candidate, os.stat(candidate)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return None
    return None


def ownership_problem(path: Path) -> str | None:
    """Why ``path`` is not the person's to use, or None: the folder, or
    (when it does not exist yet) the folder it would be made in, must be
    owned by this user — or be a shared, sticky folder such as /tmp, where
    each person's folders are their own."""
    found = _nearest_existing(path)
    if found is None:
        return None  # the start itself will say what is wrong
    where, st = found
    uid = os.getuid()
    if st.st_uid == uid:
        return None
    shared_sticky = where != path and st.st_mode & stat.S_ISVTX and st.st_mode & stat.S_IWOTH
    if shared_sticky:
        return None
    return (f"{where} belongs to another user (uid {st.st_uid}); Pneuma makes and opens "
            "workspaces only in folders you own")


def refuse_foreign_folder(path: Path) -> None:
    """Refuse ``path`` (resolved) unless it is a folder of the person's own:
    not /, not the home folder itself, not a system or shared folder, not
    another user's."""
    home = _home()
    if path == Path("/") or path == home:
        which = "the root folder" if path == Path("/") else "your home folder"
        raise ToolError("E_BAD_ARGS", f"{path} is {which}; choose a folder of its own for the "
                        "workspace", details={"field": "path", "reason": "special_folder"})
    problem = system_folder_problem(path, home)
    if problem is not None:
        raise ToolError("E_DENY_PATH", f"{problem}; choose a folder of your own for the "
                        "workspace", details={"field": "path", "reason": "system_folder"})
    problem = ownership_problem(path)
    if problem is not None:
        raise ToolError("E_DENY_PATH", problem, details={"field": "path", "reason": "not_owned"})


def is_workspace(path: Path) -> bool:
    """Whether ``path`` is a Pneuma workspace (see the module's docstring)."""
    try:
        st = os.lstat(path / ".pneuma")
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and workspace_mode(path) is not None
