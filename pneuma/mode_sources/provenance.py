"""Where each installed mode came from.

pip already records most of it per distribution (PEP 610's
``direct_url.json``: the URL, a git commit, whether it is editable), read here
with ``importlib.metadata``. Pneuma keeps only what pip does not know — the
SOURCE the person typed, its kind and when — in one small JSON file next to
the environment (``<sys.prefix>/pneuma-mode-sources.json``), written
atomically and never read or written through a link.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.core.files import atomic_write_bytes
from pneuma.mode_sources.wheel_metadata import canonical_name

RECORD_NAME = "pneuma-mode-sources.json"


def record_path() -> Path:
    return Path(sys.prefix) / RECORD_NAME


@dataclass(frozen=True)
class Provenance:
    """One distribution's origin: pip's record joined with Pneuma's."""

    version: str | None
    source: str
    kind: str
    commit: str | None
    editable: bool
    installed_at: str | None


def read_records() -> dict[str, dict[str, Any]]:
    """Pneuma's own record, by canonical distribution name (empty when absent,
    unreadable, or a link: a link planted there counts as no file)."""
    try:
        fd = os.open(record_path(), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as handle:
            data = json.loads(handle.read(1_000_000))
    except (OSError, ValueError):
        return {}
    records = data.get("distributions") if isinstance(data, dict) else None
    return {k: v for k, v in records.items() if isinstance(v, dict)} \
        if isinstance(records, dict) else {}


def remember(distribution: str, *, source: str, kind: str, editable: bool) -> None:
    records = read_records()
    records[canonical_name(distribution)] = {
        "source": source, "kind": kind, "editable": editable,
        "installed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    _write(records)


def forget(distribution: str) -> None:
    records = read_records()
    if records.pop(canonical_name(distribution), None) is not None:
        _write(records)


def _write(records: dict[str, dict[str, Any]]) -> None:
    path = record_path()
    if path.is_symlink():
        raise ToolError("E_DENY_PATH", f"{path} is a link; pneuma will not write through it")
    body = json.dumps({"version": 1, "distributions": records}, indent=2, sort_keys=True)
    atomic_write_bytes(path, (body + "\n").encode("utf-8"))


def installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance_of(distribution: str) -> Provenance | None:
    """The installed distribution's origin, or None when it is not installed."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    direct = _direct_url(dist)
    record = read_records().get(canonical_name(distribution), {})
    vcs = _section(direct, "vcs_info")
    dir_info = _section(direct, "dir_info")
    editable = bool(dir_info.get("editable", False))
    commit = vcs.get("commit_id") if isinstance(vcs.get("commit_id"), str) else None
    source = record.get("source") or _source_from_pip(direct, distribution)
    kind = record.get("kind") or ("git" if vcs else "folder" if dir_info else
                                  "file" if direct else "pypi")
    return Provenance(dist.version, str(source), str(kind), commit, editable,
                      record.get("installed_at"))


def _section(direct: dict[str, Any], key: str) -> dict[str, Any]:
    value = direct.get(key)
    return value if isinstance(value, dict) else {}


def _direct_url(dist: importlib.metadata.Distribution) -> dict[str, Any]:
    with contextlib.suppress(ValueError, TypeError):
        data = json.loads(dist.read_text("direct_url.json") or "{}")
        if isinstance(data, dict):
            return data
    return {}


def _source_from_pip(direct: dict[str, Any], distribution: str) -> str:
    url = direct.get("url")
    if not isinstance(url, str):
        return f"pypi:{distribution}"
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict):
        ref = vcs.get("requested_revision")
        return f"{vcs.get('vcs', 'git')}+{url}" + (f"@{ref}" if ref else "")
    return url.removeprefix("file://")


def restore_argument(distribution: str) -> list[str] | None:
    """pip arguments that put back exactly what is installed now (an update's
    way back), or None when it cannot be named."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    direct = _direct_url(dist)
    url = direct.get("url")
    vcs = direct.get("vcs_info")
    if isinstance(url, str) and isinstance(vcs, dict) and vcs.get("commit_id"):
        return [f"{vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}"]
    dir_info = direct.get("dir_info")
    if isinstance(url, str) and isinstance(dir_info, dict):
        path = url.removeprefix("file://")
        return ["--editable", path] if dir_info.get("editable") else [path]
    if isinstance(url, str):
        path = url.removeprefix("file://")
        return [path] if Path(path).exists() or not url.startswith("file://") else None
    return [f"{dist.metadata['Name']}=={dist.version}"]


def iter_records() -> Iterator[tuple[str, dict[str, Any]]]:
    yield from sorted(read_records().items())
