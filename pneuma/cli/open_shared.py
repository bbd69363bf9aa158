"""``pneuma open FILE.html``: a new workspace from a shared file
(docs/sharing.md, "Open a shared file"). The launcher's ``pneuma open``
with no file is unchanged."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


def open_shared_file(source: Path, workspace: Path | None, turn: int | None,
                     backend: str, as_json: bool) -> None:
    """Make the workspace, say where it is and how to go on; exit 2 with
    the error's code and message when the file is refused."""
    from pneuma.core.errors import ToolError
    from pneuma.share.open import open_share

    try:
        opened = open_share(source, workspace, turn, backend=backend)
    except ToolError as exc:
        if as_json:
            click.echo(json.dumps({"ok": False, "error": exc.to_dict()}))
        click.echo(f"pneuma: error: {exc.code}: {exc.message}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps({"ok": True, "workspace": str(opened.workspace),
                               "mode": opened.mode, "title": opened.title, "turn": opened.turn,
                               "turns": opened.turns, "files": opened.files,
                               "messages": opened.messages,
                               "conversationId": opened.conversation_id}))
        return
    turn_words = (f"turn {opened.turn} of {opened.turns}" if opened.turns
                  else "the files as shared")
    click.echo(f"[pneuma] opened {source.name} into {opened.workspace}: {opened.files} file(s) "
               f"as of {turn_words}, mode {opened.mode}, {opened.messages} message(s) of "
               "history", err=True)
    click.echo(f"[pneuma] go on from there: pneuma run -w {opened.workspace}", err=True)
    click.echo(str(opened.workspace))
