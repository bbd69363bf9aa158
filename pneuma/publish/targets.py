"""The person's publish targets: ``publish.toml`` in their Pneuma config
folder (``$XDG_CONFIG_HOME/pneuma/``, else ``~/.config/pneuma/``, where the
preferences are kept too: pneuma.server.preferences), never in a workspace —
a workspace is shared, handed on and opened by others; where its owner
publishes and how is theirs alone.

    [targets.site]
    kind = "git"                 # which publisher: "git", "folder", or a plugin's
    remote = "git@github.com:ada/notes.git"
    branch = "gh-pages"
    url = "https://{user}.github.io/{repo}/"

    [targets.www]
    kind = "folder"
    path = "/srv/www/notes"

The file is read without following a link at its name (pneuma.core.user_files);
Pneuma never writes it. A damaged file or target is one line naming it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.core.user_files import UnusableUserFile, UserFile, config_home
from pneuma.host.publishers import PublishError

PUBLISH_FILE = "publish.toml"
MAX_FILE_BYTES = 256 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class Target:
    """One named target: its ``kind`` (the publisher's name) and its table
    as written, with ``name`` and ``kind`` in it (what the publisher gets)."""

    name: str
    kind: str
    settings: Mapping[str, Any]

    @property
    def url(self) -> str | None:
        url = self.settings.get("url")
        return url if isinstance(url, str) and url else None


class UnusableTargetsFile(UnusableUserFile):
    def __init__(self, path: Path, why: str) -> None:
        super().__init__(path, f"the publish targets file {path} {why}; Pneuma never follows "
                               "or reads through it: move it away")


def targets_file(environ: dict[str, str] | None = None) -> Path:
    return config_home(environ) / PUBLISH_FILE


def read_targets(path: Path | None = None) -> dict[str, Target]:
    """The targets by name, in the file's order; {} when there is no file.
    ``PublishError`` (``E_BAD_ARGS``) naming the file when it is not TOML or
    a target is not a table with a ``kind``."""
    path = path or targets_file()
    try:
        data = UserFile(path.parent, path.name, UnusableTargetsFile,
                        max_bytes=MAX_FILE_BYTES).read()
    except UnusableUserFile as exc:
        raise PublishError(str(exc), code="E_BAD_ARGS") from None
    except OSError as exc:
        raise PublishError(f"cannot read {path} ({exc.strerror or exc})", code="E_IO") from None
    if data is None:
        return {}
    if len(data) > MAX_FILE_BYTES:
        raise PublishError(f"{path} is over {MAX_FILE_BYTES} bytes", code="E_BAD_ARGS")
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PublishError(f"{path} is not valid TOML ({exc})", code="E_BAD_ARGS") from None
    tables = document.get("targets", {})
    if not isinstance(tables, dict):
        raise PublishError(f"{path}: 'targets' must be a table of [targets.NAME] tables",
                           code="E_BAD_ARGS")
    return {name: _target(path, name, table) for name, table in tables.items()}


def _target(path: Path, name: str, table: Any) -> Target:
    if not _NAME.match(name):
        raise PublishError(f"{path}: the target name {name!r} must be letters, digits, '.', "
                           "'_' or '-'", code="E_BAD_ARGS")
    if not isinstance(table, dict):
        raise PublishError(f"{path}: [targets.{name}] must be a table", code="E_BAD_ARGS")
    kind = table.get("kind")
    if not isinstance(kind, str) or not kind:
        raise PublishError(f"{path}: [targets.{name}] has no kind (\"git\" or \"folder\")",
                           code="E_BAD_ARGS")
    return Target(name=name, kind=kind, settings={**table, "name": name, "kind": kind})
