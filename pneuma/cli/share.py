"""``pneuma share``: the workspace as one self-contained HTML file — the
artifact, the timeline of its turns and the conversation, scrubbed of
secrets (docs/sharing.md, "Share as one file").

Read-only on the workspace (it writes only the shared file): safe beside a
running ``pneuma run``. A failure is one line, ``pneuma: error: …``: exit 2
for a wrong request (no such workspace or conversation), 1 when the file
cannot be made (over the size cap, a disk error).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click

_WRONG_REQUEST = {"E_BAD_ARGS", "E_NOT_FOUND", "E_DENY_PATH"}


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"pneuma: error: {' '.join(message.split())}", err=True)
    sys.exit(code)


@click.command("share")
@click.option("--workspace", "-w", type=click.Path(path_type=Path), default=Path("."),
              show_default=True, help="The workspace folder.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The file to write (default: W/exports/<name>-share.html).")
@click.option("--conversation", default=None,
              help="The conversation to share (default: the most recently updated; "
                   "`pneuma conversations list` shows them).")
@click.option("--no-chat", is_flag=True, help="Leave the conversation out.")
@click.option("--no-history", is_flag=True,
              help="Only the last turn's files: no timeline of earlier turns.")
@click.option("--leave-out", "leave_out", multiple=True, metavar="GLOB",
              help="Files not to include (repeatable), e.g. 'assets/**' or '*.mp4'.")
@click.option("--max-size", type=click.FloatRange(min=0.1), default=50.0, show_default=True,
              help="The largest shared file to write, in MB.")
@click.option("--json", "as_json", is_flag=True, help="Say what was written as JSON.")
def share_command(workspace: Path, output: Path | None, conversation: str | None, no_chat: bool,
                  no_history: bool, leave_out: tuple[str, ...], max_size: float,
                  as_json: bool) -> None:
    """Share the workspace as one HTML file that opens anywhere, offline."""
    from pneuma.cli.workspace_words import workspace_problem
    from pneuma.core.errors import ToolError
    from pneuma.share.builder import MB, ShareOptions, write_share

    problem = workspace_problem(workspace)
    if problem is not None:
        _fail(problem, 2)
    options = ShareOptions(conversation=conversation, chat=not no_chat, history=not no_history,
                           leave_out=list(leave_out), max_bytes=int(max_size * MB))
    try:
        shared = write_share(workspace, output, options)
    except ToolError as exc:
        _fail(exc.message, 2 if exc.code in _WRONG_REQUEST else 1)
    except OSError as exc:
        _fail(f"cannot write {exc.filename or output}: {exc.strerror or exc}", 1)
    if as_json:
        click.echo(json.dumps({"path": str(shared.path), "size": shared.size,
                               "turns": shared.turns, "contents": shared.contents,
                               "leftOut": shared.left_out}, ensure_ascii=False))
        return
    for left in shared.left_out:
        click.echo(f"[pneuma] left out: {left['path']} ({left['reason']})", err=True)
    size = f"{shared.size / MB:.1f} MB" if shared.size >= MB / 10 else f"{shared.size // 1024} KB"
    click.echo(f"[pneuma] shared {shared.turns} turn(s) as one file of {size}", err=True)
    click.echo(str(shared.path))
