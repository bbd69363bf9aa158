"""``pneuma publish``: the workspace's result to one of the person's publish
targets (``publish.toml`` in their config folder; docs/sharing.md,
"Publish"), or ``--list`` of those targets.

What is published is built with the mode's exporter (its site by default,
``--format`` another format, ``--share`` the shared file). Every failure is
one line, ``pneuma: error: …``: exit 2 for a wrong request (no such target,
no such format, a broken target), 1 when publishing itself failed (the
remote unreachable, the push rejected, a file in the way).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from pneuma.cli.workspace_words import workspace_problem

if TYPE_CHECKING:
    from pneuma.host.publishers import PublishError
    from pneuma.publish.targets import Target

# A wrong request (exit 2) rather than a publish that failed (exit 1).
_REQUEST_CODES = ("E_BAD_ARGS", "E_NOT_FOUND", "E_UNSUPPORTED")


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"pneuma: error: {' '.join(message.split())}", err=True)
    sys.exit(code)


def _fail_publish(exc: PublishError) -> NoReturn:
    message = str(exc)
    if exc.hint and exc.hint not in message:
        message = f"{message} ({exc.hint.rstrip('.')})"
    _fail(message, 2 if exc.code in _REQUEST_CODES else 1)


def _where(target: Target) -> str:
    from pneuma.publish.git_branch import hide_credentials

    settings = target.settings
    if target.kind == "git":
        return f"{hide_credentials(str(settings.get('remote', '?')))} " \
               f"{settings.get('branch', 'gh-pages')}"
    if target.kind == "folder":
        return str(settings.get("path", "?"))
    return ""


def _list(as_json: bool) -> None:
    from pneuma.host.publishers import PublishError
    from pneuma.publish.targets import read_targets, targets_file

    try:
        targets = read_targets()
    except PublishError as exc:
        _fail_publish(exc)
    rows: list[dict[str, Any]] = [{"name": t.name, "kind": t.kind, "where": _where(t),
                                   "url": t.url} for t in targets.values()]
    if as_json:
        click.echo(json.dumps({"file": str(targets_file()), "targets": rows}, ensure_ascii=False))
        return
    if not rows:
        click.echo(f"[pneuma] no publish targets yet; add one to {targets_file()} "
                   "(docs/sharing.md, \"Publish\")", err=True)
    for row in rows:
        click.echo("\t".join([row["name"], row["kind"], row["where"], row["url"] or ""]).rstrip())


@click.command("publish")
@click.option("--workspace", "-w", type=click.Path(path_type=Path), default=Path("."),
              show_default=True, help="The workspace directory.")
@click.option("--to", "target_name", default=None,
              help="The publish target, by its name in publish.toml (`pneuma publish --list`).")
@click.option("--format", "fmt", default=None,
              help="Publish this export format instead of the mode's site.")
@click.option("--share", is_flag=True, help="Publish the shared file (`pneuma share`) as index.html.")
@click.option("--message", "-m", default=None, help="The commit message (git) or log line.")
@click.option("--mode", "mode_name", default=None,
              help="Mode of the workspace (default: the one it was last run with).")
@click.option("--list", "list_targets", is_flag=True, help="List the publish targets and exit.")
@click.option("--json", "as_json", is_flag=True, help="The result (or --list) as JSON.")
def publish_command(workspace: Path, target_name: str | None, fmt: str | None, share: bool,
                    message: str | None, mode_name: str | None, list_targets: bool,
                    as_json: bool) -> None:
    """Publish the workspace's result (a site, a deck's HTML, the shared file) to a target."""
    if list_targets:
        _list(as_json)
        return
    problem = workspace_problem(workspace)
    if problem is not None:
        _fail(problem, 2)
    if target_name is None:
        _fail("say where with --to NAME (`pneuma publish --list` shows your targets)", 2)
    if share and fmt is not None:
        _fail("--share and --format each say what to publish; give one", 2)
    from pneuma.host.plugins import get_plugin_manager
    from pneuma.host.publishers import PublishError
    from pneuma.publish.run import publish_workspace
    from pneuma.workspace.mode_switch import workspace_mode

    mode = mode_name or workspace_mode(workspace)
    if mode is None and not share:
        _fail(f"{workspace} has not been run with a mode yet; say which with --mode", 2)
    try:
        done = publish_workspace(get_plugin_manager(), workspace, mode or "", target_name,
                                 format_name=fmt, share=share, message=message,
                                 params=_stored_params(workspace, mode))
    except PublishError as exc:
        _fail_publish(exc)
    except OSError as exc:
        _fail(f"cannot build what to publish: {exc.strerror or exc}", 1)
    result = done.result
    for warning in (*done.warnings, *result.warnings):
        click.echo(f"[pneuma] warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps({"target": done.target.name, "what": done.what,
                               "changed": result.changed, "commit": result.commit,
                               "url": result.url, "summary": result.summary},
                              ensure_ascii=False))
        return
    click.echo(f"[pneuma] {done.what}: {result.summary}")
    if result.url:
        click.echo(f"[pneuma] to be seen at {result.url}")


def _stored_params(workspace: Path, mode: str | None) -> dict[str, object]:
    from pneuma.workspace.params import read_config

    if mode is None:
        return {}
    try:
        stored = read_config(workspace).get("params", {})
    except Exception:  # a broken config must not stop a publish; the mode's defaults apply
        return {}
    params = stored.get(mode, {}) if isinstance(stored, dict) else {}
    return params if isinstance(params, dict) else {}
