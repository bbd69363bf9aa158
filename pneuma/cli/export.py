"""``pneuma export``: the workspace in one of the formats its mode's exporter
offers (``register_exporters``), or ``--list`` of those formats.

Every failure is one line, ``pneuma: error: …``: exit 2 for a wrong
request (no such mode or format, a workspace switched to a mode that cannot
export it), 1 when the export itself failed — the exporter's ``ExportError``
(with its hint, when it has one and the message does not already say it),
or a Playwright error it let escape, said as ``html_to_pdf`` says it (no
Chromium installed, Chromium failed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click

from pneuma.cli.workspace_words import workspace_problem
from pneuma.host.exporters import Exporter, ExportError, all_exporters
from pneuma.workspace.mode_switch import PARKED_DIR, workspace_mode


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"pneuma: error: {' '.join(message.split())}", err=True)
    sys.exit(code)


def _parked_modes(workspace: Path, exporters: dict[str, Exporter]) -> list[str]:
    """Modes this workspace was switched away from that could export it."""
    parked = workspace / PARKED_DIR
    try:
        return sorted(p.name for p in parked.iterdir() if p.is_dir() and p.name in exporters)
    except OSError:
        return []


def _format_lines(exporter: Exporter) -> list[str]:
    from pneuma.host.manifest import localize  # pydantic: only when listing

    return [f"{fmt.name}\t{localize(fmt.label)}" for fmt in exporter.formats]


@click.command("export")
@click.option("--mode", "mode_name", default=None,
              help="Mode of the workspace (default: the one it was last run with).")
@click.option("--workspace", "-w", type=click.Path(path_type=Path),
              default=Path("."), show_default=True, help="The workspace directory.")
@click.option("--format", "fmt", default=None,
              help="One of the mode's formats (`pneuma export --list` shows them).")
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None,
              help="File to write, or the directory for formats that write one file per "
                   "page (default: under W/exports/).")
@click.option("--list", "list_formats", is_flag=True,
              help="List the formats the mode offers and exit.")
@click.option("--json", "as_json", is_flag=True, help="With --list: the formats as JSON.")
@click.option("--param", "extra", multiple=True, metavar="NAME=VALUE",
              help="An option of the format, over the workspace's params (the video mode's "
                   "png: --param time=2.5).")
def export_command(mode_name: str | None, workspace: Path, fmt: str | None, output: Path | None,
                   list_formats: bool, as_json: bool, extra: tuple[str, ...]) -> None:
    """Export the workspace in a format its mode offers (PDF, HTML, PNG, PPTX, …)."""
    from pneuma.host.plugins import get_plugin_manager

    problem = workspace_problem(workspace)
    if problem is not None:
        _fail(problem, 2)
    exporters = all_exporters(get_plugin_manager())
    asked = mode_name is not None
    recorded = workspace_mode(workspace)
    mode_name = mode_name or recorded
    if mode_name is None:
        _fail(f"{workspace} has not been run with a mode yet; say which with --mode "
              f"({', '.join(sorted(exporters)) or 'no mode can export'})", 2)
    exporter = exporters.get(mode_name)
    if exporter is None:
        _refuse_unknown_mode(mode_name)
        _fail(f"the {mode_name} mode has no export; modes that export: "
              f"{', '.join(sorted(exporters)) or 'none'}", 2)
    if list_formats:
        if as_json:
            click.echo(json.dumps({"mode": mode_name, "formats": [
                {"name": f.name, "label": f.label, "suffix": f.suffix} for f in exporter.formats]},
                ensure_ascii=False))
        else:
            click.echo("\n".join(_format_lines(exporter)))
        return
    if fmt is None:
        _fail(f"say which format with --format: {', '.join(f.name for f in exporter.formats)}", 2)
    try:
        exporter.format(fmt)
    except ExportError as exc:
        _fail(str(exc), 2)
    try:
        params = {**_stored_params(workspace, mode_name), **_given_params(extra)}
        result = exporter.run(workspace, fmt, output, params, progress=_Progress())
    except ExportError as exc:
        parked = [] if asked or exc.code != "E_CONFLICT" else _parked_modes(workspace, exporters)
        if parked:
            other = parked[0]
            _fail(f"{workspace} is switched to the {mode_name} mode, which cannot export it "
                  f"({exc}); switch it back with `pneuma run --mode {other} --switch-mode "
                  f"-w {workspace}`, or export it as it is with `pneuma export --mode {other}`", 2)
        _fail(_with_hint(exc), 1)
    except OSError as exc:  # the output could not be written there
        _fail(f"cannot write {exc.filename or output}: {exc.strerror or exc}", 1)
    except Exception as exc:
        from pneuma.tools.html_render import renderer_failure

        failure = renderer_failure(exc)
        if failure is None:
            raise  # a bug in the exporter: its traceback is what to report
        _fail(_with_hint(failure), 1)
    for warning in result.warnings:
        click.echo(f"[pneuma] warning: {warning}", err=True)
    for line in result.left_out:  # the others were exported; these were not
        click.echo(f"[pneuma] left out: {line}", err=True)
    where = result.files[0].parent if len(result.files) > 1 else result.files[0]
    what = result.summary or f"{len(result.files)} file(s)"
    click.echo(f"[pneuma] exported {what} to {where}", err=True)
    for path in result.files:
        click.echo(str(path))


class _Progress:
    """A long export's progress on standard error, "[pneuma] frame 120/240":
    about ten lines for the whole export, and the last one."""

    def __init__(self) -> None:
        self.shown = -1

    def __call__(self, done: int, total: int, what: str) -> None:
        step = done * 10 // total if total > 0 else 0
        if step != self.shown or done == total:
            self.shown = step
            click.echo(f"[pneuma] {what or f'{done}/{total}'}", err=True)


def _given_params(extra: tuple[str, ...]) -> dict[str, object]:
    params: dict[str, object] = {}
    for item in extra:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            _fail(f"--param takes NAME=VALUE, not {item!r}", 2)
        params[name.strip()] = value
    return params


def _refuse_unknown_mode(mode_name: str) -> None:
    """A mode that is not installed is said to be missing (with the ones
    that are), not to have no export."""
    from pneuma.startup.start_checks import StartProblem, load_mode

    try:
        load_mode(mode_name)
    except StartProblem as exc:
        _fail(exc.message, exc.code)


def _with_hint(exc: ExportError) -> str:
    message = str(exc)
    if exc.hint and exc.hint not in message:
        return f"{message} ({exc.hint.rstrip('.')})"
    return message


def _stored_params(workspace: Path, mode_name: str) -> dict[str, object]:
    from pneuma.workspace.params import read_config

    try:
        stored = read_config(workspace).get("params", {})
    except Exception:  # a broken config must not stop an export; the mode's defaults apply
        return {}
    params = stored.get(mode_name, {}) if isinstance(stored, dict) else {}
    return params if isinstance(params, dict) else {}
