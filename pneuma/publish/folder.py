"""The folder publisher: the files copied into a folder of the person's (one
a web server serves, a synced folder, a mounted share).

    [targets.www]
    kind = "folder"
    path = "~/public_html/notes"
    url = "https://example.org/~ada/notes/"   # optional

What a publish put there is listed in a manifest it keeps in the folder
(``.pneuma-publish.json``: each file's path and SHA-256). The next publish
replaces those files and removes the ones the folder to publish no longer
has — and nothing else: a file it did not put there is never deleted or
overwritten, and neither is one of its own files that was changed since
(the publish stops and names it, or keeps it and says so). Files are
written atomically through the folder's descriptors (pneuma.core.sandbox),
never through a link that leads out of the folder.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.core.files import write_in_workspace
from pneuma.core.sandbox import Sandbox
from pneuma.host.publishers import (
    Publisher,
    PublishError,
    PublishRequest,
    PublishResult,
)

MANIFEST = ".pneuma-publish.json"
MAX_MANIFEST_BYTES = 8 * 1024 * 1024
MAX_FILE_BYTES = 1024 * 1024 * 1024  # what one published file may be, read back to compare


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _target_root(target: Any) -> Path:
    raw = target.get("path")
    if not isinstance(raw, str) or not raw.strip():
        raise PublishError(f"the target {target.get('name')!r} has no path: give it "
                           "path = \"<the folder to publish into>\"", code="E_BAD_ARGS")
    root = Path(raw.strip()).expanduser()
    if not root.is_absolute():
        raise PublishError(f"the target {target.get('name')!r} has a relative path {raw!r}; "
                           "give the folder's full path", code="E_BAD_ARGS")
    if root.exists() and not root.is_dir():
        raise PublishError(f"{root} is not a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PublishError(f"cannot make the folder {root} ({exc.strerror or exc})",
                           code="E_IO") from None
    return root


def _source_files(source: Path) -> dict[str, Path]:
    """Every regular file of the folder to publish, by its relative POSIX path."""
    found: dict[str, Path] = {}
    for directory, _dirs, names in os.walk(source):
        for name in names:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink():
                rel = path.relative_to(source).as_posix()
                if rel != MANIFEST:
                    found[rel] = path
    return found


def _on_disk(sandbox: Sandbox, rel: str) -> str | None:
    """The SHA-256 of the target's file ``rel``, None when there is none."""
    try:
        data, _ = sandbox.read_bytes(rel, MAX_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except ToolError as exc:
        raise PublishError(f"cannot read {rel} in the target folder ({exc.message})") from None
    except IsADirectoryError:
        return "a folder"
    return _digest(data)


def _read_manifest(sandbox: Sandbox) -> dict[str, str]:
    try:
        data, _ = sandbox.read_bytes(MANIFEST, MAX_MANIFEST_BYTES)
    except FileNotFoundError:
        return {}
    except (ToolError, OSError) as exc:
        raise PublishError(f"cannot read {MANIFEST} in the target folder ({exc})") from None
    try:
        document = json.loads(data)
        files = document["files"]
        if not isinstance(files, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            raise ValueError("files is not a map of paths to digests")
    except (ValueError, KeyError, TypeError) as exc:
        raise PublishError(f"{MANIFEST} in the target folder is damaged ({exc})",
                           hint=f"move {MANIFEST} away; the next publish then replaces no "
                                "file it finds there") from None
    return dict(files)


def _plan(sandbox: Sandbox, old: dict[str, str], new: dict[str, str]
          ) -> tuple[list[str], list[str], list[str], list[str]]:
    """(files to write, files to remove, files in the way, files kept with a warning)."""
    write, remove, blocked, kept = [], [], [], []
    for rel, digest in sorted(new.items()):
        there = _on_disk(sandbox, rel)
        if there == digest:
            continue
        if there is not None and there != old.get(rel):
            blocked.append(rel)  # not ours, or ours and changed since
        else:
            write.append(rel)
    for rel in sorted(set(old) - set(new)):
        there = _on_disk(sandbox, rel)
        if there is None:
            continue
        if there == old[rel]:
            remove.append(rel)
        else:
            kept.append(rel)
    return write, remove, blocked, kept


def publish_to_folder(request: PublishRequest) -> PublishResult:
    root = _target_root(request.target)
    sandbox = Sandbox(root, forbidden=())
    sources = _source_files(request.source_dir)
    contents = {rel: path.read_bytes() for rel, path in sources.items()}
    new = {rel: _digest(data) for rel, data in contents.items()}
    old = _read_manifest(sandbox)
    write, remove, blocked, kept = _plan(sandbox, old, new)
    if blocked:
        shown = ", ".join(blocked[:3]) + (f" and {len(blocked) - 3} more" if len(blocked) > 3 else "")
        raise PublishError(f"{root} already has {shown}, which an earlier publish did not put "
                           "there as it is now; nothing was written",
                           hint="move those files away (or publish to another folder)")
    try:
        for rel in write:
            write_in_workspace(sandbox, rel, contents[rel])
        for rel in remove:
            sandbox.unlink(rel)
            _remove_empty_parents(root, rel)
        if write or remove or old != new:
            manifest = {"version": 1, "files": new}
            write_in_workspace(sandbox, MANIFEST, json.dumps(manifest, indent=1, sort_keys=True)
                               .encode())
    except ToolError as exc:
        raise PublishError(f"cannot write into {root} ({exc.message})") from None
    except OSError as exc:
        raise PublishError(f"cannot write into {root} ({exc.strerror or exc})",
                           code="E_IO") from None
    warnings = [f"kept {rel}: it was changed since it was published" for rel in kept]
    url = request.target.get("url")
    url = url if isinstance(url, str) and url else root.as_uri() + "/"
    changed = bool(write or remove)
    files = f"{len(new)} file{'' if len(new) == 1 else 's'}"
    summary = (f"published {files} to {root} ({len(write)} written, {len(remove)} removed)"
               if changed else f"nothing changed: {root} already holds these {files}")
    return PublishResult(summary=summary, url=url, changed=changed, warnings=warnings)


def _remove_empty_parents(root: Path, rel: str) -> None:
    parent = (root / rel).parent
    while parent != root and parent.is_relative_to(root):
        try:
            parent.rmdir()  # only an empty folder goes
        except OSError:
            return
        parent = parent.parent


FOLDER_PUBLISHER = Publisher(
    name="folder",
    label={"en": "a folder", "zh-CN": "一个文件夹"},
    publish=publish_to_folder,
)
