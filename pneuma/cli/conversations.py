"""``pneuma conversations list``: the workspace's conversations from the
terminal (docs/conversations.md). Read-only: safe beside a running
``pneuma run``.

Errors are one line, ``pneuma: error: …``, and exit status 2, as the other
commands'.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import datetime
from pathlib import Path
from typing import NoReturn

import click


def _fail(message: str) -> NoReturn:
    click.echo(f"pneuma: error: {message}", err=True)
    sys.exit(2)


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d %H:%M")


@click.group()
def conversations() -> None:
    """The workspace's conversations (switch between them in the page)."""


@conversations.command("list")
@click.option("-w", "--workspace", type=click.Path(path_type=Path), required=True,
              help="The workspace folder.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_command(workspace: Path, as_json: bool) -> None:
    """Each conversation: id, title, messages, last updated, and which is current."""
    from pneuma.cli.workspace_words import workspace_problem
    from pneuma.server.conversations import read_conversations

    problem = workspace_problem(workspace)
    if problem is not None:
        _fail(problem)
    try:
        found = read_conversations(workspace, previews=as_json)
    except (sqlite3.Error, OSError) as exc:
        _fail(f"could not read the conversations of {workspace}: {exc}")
    if as_json:
        click.echo(json.dumps({"workspace": str(workspace.resolve()), "conversations": [
            {**c.as_json(), "updated_iso": datetime.fromtimestamp(c.updated).astimezone()
             .isoformat(timespec="seconds")} for c in found]}, ensure_ascii=False, indent=1))
        return
    if not found:
        click.echo(f"No conversations in {workspace} yet (`pneuma run` starts one).")
        return
    click.echo(f"  {'ID':<36}  {'UPDATED':<16}  {'MESSAGES':>8}  TITLE")
    for c in found:
        mark = "*" if c.current else " "
        click.echo(f"{mark} {c.id:<36}  {_when(c.updated):<16}  {c.messages:>8}  "
                   f"{c.title or '(untitled)'}")
    click.echo("\n* the current conversation (a restart of `pneuma run` resumes it)")
