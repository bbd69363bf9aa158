"""What is published: a folder the host builds from the workspace with the
mode's own exporter (pneuma.host.exporters), then hands to a publisher.

- By default, the format the mode's exporter names as its site
  (``Exporter.site_format``: webcraft's site zip, a slide deck's HTML).
- ``format``: any format the mode offers, chosen by the person.
- ``share``: the workspace as one shared file (``pneuma share``,
  docs/sharing.md), published as ``index.html``.

A ``.zip`` is unpacked (its entries checked: no absolute path, no ``..``,
no link), a single ``.html`` becomes ``index.html``, any other single file
keeps its name, a folder's files go as they are.
"""

from __future__ import annotations

import shutil
import stat
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.host.exporters import Exporter, ExportError
from pneuma.host.publishers import PublishError


@dataclass(frozen=True)
class BuiltSource:
    """The folder to publish and what it is, in a few words ("the site (zip)")."""

    folder: Path
    what: str
    warnings: tuple[str, ...] = ()


def choose_format(exporter: Exporter | None, mode: str, asked: str | None) -> str:
    """The export format to publish: the one asked for, else the mode's site."""
    if exporter is None:
        raise PublishError(f"the {mode} mode has no export to publish; publish the shared "
                           "file with --share", code="E_BAD_ARGS")
    offered = [f.name for f in exporter.formats]
    if asked is not None:
        if asked not in offered:
            raise PublishError(f"the {mode} mode cannot export {asked!r}; it offers: "
                               f"{', '.join(offered)}", code="E_BAD_ARGS")
        return asked
    if exporter.site_format is None:
        raise PublishError(f"the {mode} mode names no site to publish; choose one of its "
                           f"formats with --format ({', '.join(offered)}), or publish the "
                           "shared file with --share", code="E_BAD_ARGS")
    return exporter.site_format


def build_export(exporter: Exporter, format_name: str, workspace: Path, into: Path,
                 params: Mapping[str, Any]) -> BuiltSource:
    """Export ``format_name`` beside ``into`` and lay its files out in
    ``into`` (which must not exist yet)."""
    fmt = exporter.format(format_name)
    scratch = into.with_name(into.name + "-export")
    scratch.mkdir()
    output = scratch / ("files" if fmt.is_directory else f"export{fmt.suffix}")
    try:
        result = exporter.run(workspace, format_name, output, params)
    except ExportError as exc:
        raise PublishError(f"cannot export {format_name}: {exc}", code=exc.code,
                           hint=exc.hint) from None
    if fmt.is_directory:
        shutil.copytree(output, into, symlinks=False)
    elif fmt.suffix == ".zip":
        _unzip(output, into)
    else:
        into.mkdir()
        name = "index.html" if fmt.suffix in (".html", ".htm") else _plain_name(exporter, workspace, fmt.suffix)
        shutil.copyfile(output, into / name)
    what = result.summary or format_name
    return BuiltSource(into, f"{format_name} ({what})", tuple(result.warnings + result.left_out))


def _plain_name(exporter: Exporter, workspace: Path, suffix: str) -> str:
    stem = exporter.default_name(workspace) if exporter.default_name else exporter.mode
    return (stem or exporter.mode) + suffix


def _unzip(archive: Path, into: Path) -> None:
    """The zip's files under ``into``; an entry that would land outside it
    or is a link is refused (an exporter's zip never has one)."""
    into.mkdir()
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():
            name = PurePosixPath(info.filename)
            if name.is_absolute() or ".." in name.parts or "\\" in info.filename:
                raise PublishError(f"the export holds an unsafe path {info.filename!r}")
            if stat.S_ISLNK(info.external_attr >> 16):
                raise PublishError(f"the export holds a link {info.filename!r}")
            target = into.joinpath(*name.parts)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zipped.open(info) as source, open(target, "wb") as sink:
                shutil.copyfileobj(source, sink)


def build_share(workspace: Path, into: Path, *, mode: str | None = None,
                conversation: str | None = None, secrets: Sequence[str] = ()) -> BuiltSource:
    """The workspace as one shared file (pneuma.share.builder), ``index.html``
    in ``into``: the artifact, its turns and the conversation, scrubbed."""
    from pneuma.share.builder import ShareOptions, write_share

    into.mkdir()
    options = ShareOptions(conversation=conversation, mode=mode or None, secrets=list(secrets))
    try:
        shared = write_share(workspace, into / "index.html", options)
    except ToolError as exc:
        raise PublishError(f"cannot build the shared file: {exc.message}", code=exc.code,
                           hint=exc.hint) from None
    return BuiltSource(into, f"the shared file ({shared.turns} turns, {shared.size} bytes)")
