"""Exporters: what a mode can turn its workspace into (``pneuma export``, the
shell's Export menu), as plugins declare them through ``register_exporters``.

An ``Exporter`` names its mode, lists its formats (``ExportFormat``) and has
one function, ``export(request) -> ExportResult``. The host picks the
exporter of the workspace's mode, checks the format, fills in the default
output and calls it; an ``ExportError`` becomes one line
(``pneuma: error: …``) on the command line and, in the browser, an error
with the code it carries (``E_CONFLICT`` unless it says otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from pneuma.core.errors import CodedError


class ExportError(CodedError):
    """The workspace cannot be exported in that format; the message says why
    in one line (it is shown as ``pneuma: error: <message>``).

    ``code`` is what the browser's Export menu gets (docs/errors.md), so the
    person is told what kind of failure it is: ``E_CONFLICT`` (the default)
    when the workspace cannot be exported as it stands, ``E_UNAVAILABLE``
    when something the export needs is not installed (Chromium, a bundle),
    ``E_PREVIEW_FAIL`` when the renderer was there and failed, ``E_TIMEOUT``
    when it did not finish. ``hint`` says what to do about it.
    """



@dataclass(frozen=True)
class ExportFormat:
    """One format an exporter offers.

    ``name`` is what ``--format`` takes (``"pdf"``); ``label`` is what the
    Export menu shows, a string or ``{"en": …, "zh-CN": …}``; ``suffix`` is
    the output file's extension (``".pdf"``), or ``""`` when the format
    writes several files into a directory (one PNG per slide).
    """

    name: str
    label: str | Mapping[str, str]
    suffix: str

    @property
    def is_directory(self) -> bool:
        return self.suffix == ""


ExportProgress = Callable[[int, int, str], None]
"""``progress(done, total, what)``: how far a long export is ("frame 120/240")."""


@dataclass(frozen=True)
class ExportRequest:
    """What to export: the workspace (absolute), the format's name, where to
    write (a file, or a directory when the format's suffix is ``""``; its
    parent exists) and the mode's init params stored for the workspace.

    ``progress`` (since API 1.8.0), when the caller gives one, is told how
    far an export that takes seconds is: ``pneuma export`` prints it, the
    Export menu shows it. It may raise ``ExportError`` to stop the export
    (the person closed the page): the exporter lets it through, after
    removing what it had half written."""

    workspace: Path
    format: str
    output: Path
    params: Mapping[str, Any] = field(default_factory=dict)
    progress: ExportProgress | None = field(default=None, compare=False)

    def report(self, done: int, total: int, what: str = "") -> None:
        """Tell the caller how far the export is (nothing when it did not ask)."""
        if self.progress is not None:
            self.progress(done, total, what)


@dataclass
class ExportResult:
    """What was written (every file, in order), warnings to show the person
    (a missing asset, …) and a one-line summary (``"3 slides"``).

    ``left_out`` is one line per slide, page or diagram that could not be
    exported while the others were (``"slides/02.html: left out, it did not
    finish within 20 s …"``): ``pneuma export`` prints each, the Export menu
    shows them (``X-Pneuma-Export-Left-Out``)."""

    files: list[Path]
    warnings: list[str] = field(default_factory=list)
    summary: str = ""
    left_out: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Exporter:
    """The exports of one mode: its formats and the function that writes them.

    ``default_name`` names the output when none is given (without suffix;
    the host puts it under ``W/exports/``); it defaults to the mode's name.
    ``site_format`` names the format that is the mode's publishable site
    (``pneuma publish``, pneuma.publish): a ``.zip`` is published unpacked,
    a ``.html`` file as ``index.html``, a folder's files as they are.
    """

    mode: str
    formats: Sequence[ExportFormat]
    export: Callable[[ExportRequest], ExportResult]
    default_name: Callable[[Path], str] | None = None
    site_format: str | None = None

    def format(self, name: str) -> ExportFormat:
        for fmt in self.formats:
            if fmt.name == name:
                return fmt
        offered = ", ".join(f.name for f in self.formats)
        raise ExportError(f"the {self.mode} mode cannot export {name!r}; it offers: {offered}")

    def default_output(self, workspace: Path, fmt: ExportFormat) -> Path:
        stem = self.default_name(workspace) if self.default_name else self.mode
        slug = re.sub(r"[^A-Za-z0-9_\u00c0-\uffff]+", "-", stem).strip("-")[:60].strip("-")
        slug = slug or self.mode
        return workspace / "exports" / (f"{slug}-{fmt.name}" if fmt.is_directory else slug + fmt.suffix)

    def run(self, workspace: Path, format_name: str, output: Path | None = None,
            params: Mapping[str, Any] | None = None,
            progress: ExportProgress | None = None) -> ExportResult:
        """Check the format, resolve the output, export; ``ExportError`` when it cannot."""
        fmt = self.format(format_name)
        workspace = Path(workspace).resolve()
        target = Path(output).resolve() if output else self.default_output(workspace, fmt)
        if fmt.is_directory:
            if target.exists() and not target.is_dir():
                raise ExportError(f"{target} exists and is not a directory ({fmt.name} writes one file per page)")
            target.mkdir(parents=True, exist_ok=True)
        else:
            if target.is_dir():
                raise ExportError(f"{target} is a directory; give a file name ending in {fmt.suffix}")
            target.parent.mkdir(parents=True, exist_ok=True)
        return self.export(ExportRequest(workspace, fmt.name, target, dict(params or {}), progress))


def all_exporters(pm: pluggy.PluginManager) -> dict[str, Exporter]:
    """Mode name → its exporter, from every plugin's ``register_exporters``.
    Two exporters for one mode: the first registered wins (as with modes)."""
    found: dict[str, Exporter] = {}
    for impl in pm.hook.register_exporters.get_hookimpls():  # in registration order
        for exporter in impl.function() or []:
            found.setdefault(exporter.mode, exporter)
    return found


def exporter_for(pm: pluggy.PluginManager, mode: str) -> Exporter | None:
    return all_exporters(pm).get(mode)
