"""The launch stamp: what lets ``pneuma run`` print its ready line first.

Before the server can be trusted to work, ``pneuma run`` loads the plugins,
validates the mode's manifest, settles the workspace's params and checks
the skill install. On this kind of machine that is a quarter of a second
of imports (pluggy, pydantic, entry-point scanning) — and almost always it
finds that nothing changed since the last start.

So after every start whose checks passed, ``W/.pneuma/launch-stamp.json``
records what they depended on: the command's own choices (mode, backend,
params, ``--skip-skill``), the interpreter and host version, and the
``stat()`` of every file and folder the checks read or the install wrote
(the plugin environment's import paths and ``.pth`` files, the mode's
manifest, plugin module and skill folder, the installer's code and
templates, the workspace's config, CLAUDE.md, installed skill and
records). The next start compares those ``stat()``s — a millisecond, with
nothing but the standard library imported — and when every one matches
it binds the port and prints the ready line at once, then runs the same
checks while the browser is on its way. A check that fails then still
stops ``pneuma run`` with its usual message; the stamp only decides the
order, never whether a check runs.

The stamp also keeps what the browser's first requests need from those
checks (the validated manifest as ``/api/config`` shows it, the redacted
params, the mode's static folder: ``first``): with it, the early server
(``pneuma.server.early_server``) answers the page, its static files,
``/api/session`` and ``/api/config`` while the real server is still being
imported. It is derived from the covered files, so a current stamp's
``first`` is what the checks would compute again.

Any doubt counts as a change: a missing or unreadable stamp, another
Python, a stat that differs in size, mtime, inode or mode, a file that
appeared or went away, and for the workspace's own files (config.toml,
CLAUDE.md, the install's records) a content that differs.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

STAMP_FILE = ".pneuma/launch-stamp.json"
STAMP_VERSION = 3


def launch_key(
    *, mode: str, backend: str, params: Mapping[str, str], skip_skill: bool
) -> dict[str, Any]:
    """The parts of a start that are not files: same key, same checks."""
    from pneuma import __version__

    return {
        "version": STAMP_VERSION,
        "host": __version__,
        "python": sys.executable,
        "pythonVersion": sys.version,
        "sysPath": list(sys.path),
        "loadPlugins": os.environ.get("PNEUMA_LOAD_PLUGINS"),
        "mode": mode,
        "backend": backend,
        "params": dict(sorted(params.items())),
        "skipSkill": skip_skill,
    }


def _stat_line(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"{path}\0-{type(exc).__name__}"
    return f"{path}\0{st.st_mode:o}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}"


# Files of the workspace are small and a person edits them (or a tool
# copies them in with their old times, and the file system reuses an
# inode): their stat can stay the same while their content changed, so
# their content counts too.
CONTENT_LIMIT = 256 * 1024


def _content_line(path: str) -> str:
    try:
        # Never blocking on a FIFO planted where a checked file belongs.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return "-"
            data = file.read(CONTENT_LIMIT + 1)
    except OSError:
        return "-"
    if len(data) > CONTENT_LIMIT:
        return "large"
    return hashlib.sha256(data).hexdigest()


def _digest(paths: Iterable[str], workspace: Path) -> str:
    inside = str(workspace.resolve()) + os.sep
    digest = hashlib.sha256()
    for path in paths:
        digest.update(_stat_line(path).encode("utf-8", "surrogateescape"))
        if path.startswith(inside) and os.path.isfile(path):
            digest.update(b"\0" + _content_line(path).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def import_path_entries() -> list[str]:
    """The import paths and the ``.pth`` files in them: installing,
    removing or re-pointing (editable installs) any distribution, a plugin
    among them, changes one of their stats."""
    paths: list[str] = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        paths.append(entry)
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        paths.extend(os.path.join(entry, name) for name in sorted(names) if name.endswith(".pth"))
    return paths


def tree_entries(root: Path) -> list[str]:
    """A folder, its subfolders and files (their stats cover additions,
    removals and edits), skipping bytecode caches."""
    paths = [str(root)]
    if root.is_dir():
        for path in sorted(root.rglob("*")):
            if "__pycache__" not in path.parts:
                paths.append(str(path))
    return paths


def checked_paths(mode: Any, workspace: Path) -> list[str]:
    """Everything the start-up checks for ``mode`` (a ``LoadedMode``) in
    ``workspace`` read or wrote, once they have passed."""
    import pneuma
    from pneuma.host.plugins import get_plugin_manager
    from pneuma.workspace.params import CONFIG_FILE
    from pneuma.workspace.skill import (
        FINGERPRINT_FILE,
        installed_paths,
        installer_files,
    )

    workspace = workspace.resolve()
    paths = import_path_entries()
    # The host's own code that finds, validates and installs modes.
    host_dir = Path(pneuma.__file__).resolve().parent
    for folder in (host_dir, host_dir / "host", host_dir / "workspace", host_dir / "cli",
                   host_dir / "startup"):
        paths.extend(str(folder / name) for name in sorted(os.listdir(folder))
                     if name.endswith(".py"))
    paths.append(str(host_dir / "agents" / "builtin.py"))
    paths.append(str(host_dir / "host" / "host_tools.json"))  # fills in manifests' host tools
    paths.extend(str(path) for _, path in installer_files())
    # The mode: its package folder's files (the manifest among them), the
    # module of the plugin that registers it, its skill folder.
    package_dir = Path(mode.package_dir).resolve()
    paths.append(str(package_dir))
    if package_dir.is_dir():
        paths.extend(str(package_dir / name) for name in sorted(os.listdir(package_dir))
                     if (package_dir / name).is_file())
    plugin = get_plugin_manager().get_plugin(mode.plugin_name)
    plugin_file = getattr(plugin, "__file__", None)
    if isinstance(plugin_file, str):
        paths.append(str(Path(plugin_file).resolve()))
    paths.extend(tree_entries(Path(mode.skill_dir).resolve()))
    # The workspace: params, the install's records and everything it wrote.
    paths.append(str(workspace / CONFIG_FILE))
    paths.append(str(workspace / FINGERPRINT_FILE))
    paths.append(str(workspace / ".claude" / "skills" / mode.manifest.skill.install_name))
    paths.extend(str(workspace / rel) for rel in installed_paths(mode, workspace))
    return paths


def current_stamp(workspace: Path, key: Mapping[str, Any]) -> dict[str, Any] | None:
    """The stamp when the checks of the last successful start would find
    what they found then, else None. Never raises: any problem means "run
    them first"."""
    try:
        stored = json.loads((workspace / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != dict(key):
        return None
    paths = stored.get("paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return None
    if stored.get("digest") != _digest(paths, workspace):
        return None
    return stored


def stamp_is_current(workspace: Path, key: Mapping[str, Any]) -> bool:
    return current_stamp(workspace, key) is not None


def first_answers(stamp: Mapping[str, Any] | None) -> Any:
    """The early server's data a current stamp holds (a
    ``pneuma.server.early_server.FirstAnswers``), or None."""
    if stamp is None or "first" not in stamp:
        return None
    from pneuma.server.early_server import FirstAnswers

    return FirstAnswers.from_json(stamp["first"])


def write_stamp(workspace: Path, key: Mapping[str, Any], paths: Iterable[str],
                first: Mapping[str, Any] | None = None) -> None:
    """Record a start whose checks passed (only rewritten when different),
    with ``first``, the early server's data (``FirstAnswers.to_json()``)."""
    from pneuma.core.state_files import read_state_bytes, write_state_bytes

    ordered = list(dict.fromkeys(paths))
    target = workspace / STAMP_FILE
    record: dict[str, Any] = {"key": dict(key), "paths": ordered,
                              "digest": _digest(ordered, workspace)}
    if first is not None:
        record["first"] = dict(first)
    data = json.dumps(record, ensure_ascii=False, indent=1).encode("utf-8")
    try:
        if read_state_bytes(target) == data:
            return
    except OSError:
        pass
    try:
        write_state_bytes(target, data, None)
    except OSError:
        pass  # a read-only workspace starts the slow way every time; no harm


def forget_stamp(workspace: Path) -> None:
    (workspace / STAMP_FILE).unlink(missing_ok=True)
