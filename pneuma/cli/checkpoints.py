"""``pneuma checkpoints list|restore|show|revert``: the workspace's per-turn
checkpoints from the terminal (pneuma.checkpoints; docs/checkpoints.md).

Errors are one line, ``pneuma: error: …``, and exit status 2, as the other
commands'.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import click

_WORKSPACE = click.option("-w", "--workspace", type=click.Path(path_type=Path),
                          required=True, help="The workspace folder.")
_JSON = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def _fail(message: str) -> NoReturn:
    click.echo(f"pneuma: error: {message}", err=True)
    sys.exit(2)


def _open(workspace: Path) -> Any:
    from pneuma.checkpoints import Checkpoints
    from pneuma.cli.workspace_words import workspace_problem

    problem = workspace_problem(workspace)
    if problem is not None:
        _fail(problem)

    return Checkpoints.open_existing(workspace)


def _when(timestamp_ms: int) -> str:
    return datetime.fromtimestamp(timestamp_ms / 1000).astimezone().strftime("%Y-%m-%d %H:%M")


@click.group()
def checkpoints() -> None:
    """List the workspace's per-turn checkpoints, restore one, or review and revert one change of a turn."""


@checkpoints.command("list")
@_WORKSPACE
@_JSON
def list_command(workspace: Path, as_json: bool) -> None:
    """Each checkpoint: turn, time, the message's first words, what the turn changed."""
    from pneuma.core.errors import ToolError

    try:
        store = _open(workspace)
        rows = store.history()
    except ToolError as exc:
        _fail(exc.message)
    if as_json:
        click.echo(json.dumps({"workspace": str(store.workspace), "checkpoints": [
            {"ref": c.ref, "kind": c.kind, "seq": c.seq, "timestamp": c.timestamp_ms,
             "time": datetime.fromtimestamp(c.timestamp_ms / 1000).astimezone().isoformat(
                 timespec="seconds"),
             "message": c.message, "files": c.file_count, "restoredTo": c.restored_to,
             "conversation": c.conversation,
             "changes": ch.to_json()} for c, ch in rows]}, ensure_ascii=False, indent=1))
        return
    if not rows:
        click.echo(f"No checkpoints in {store.workspace} yet (one is recorded before each "
                   "turn of `pneuma run`).")
        return
    click.echo(f"{'TURN':<6} {'TIME':<16}  {'CHANGES':<12}  MESSAGE")
    for checkpoint, change in rows:
        message = checkpoint.message if checkpoint.kind == "turn" else f"({checkpoint.message})"
        click.echo(f"{checkpoint.ref:<6} {_when(checkpoint.timestamp_ms):<16}  "
                   f"{change.summary():<12}  {message}")
    click.echo("\n`pneuma checkpoints restore N -w DIR` puts the files back as they were "
               "before turn N (u1, u2...: as before a restore).")
    click.echo("`pneuma checkpoints show N -w DIR` lists what turn N did in the mode's terms; "
               "`revert N ID` reverts one of those changes.")


@checkpoints.command("restore")
@click.argument("ref")
@_WORKSPACE
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@_JSON
@click.option("--yes", "-y", is_flag=True, help="Do not ask before changing files.")
@click.option("--overwrite", "overwrite", multiple=True, metavar="PATH",
              help="Overwrite this conflicting file (changed by hand after the turn).")
@click.option("--keep-conflicts", is_flag=True,
              help="Restore the rest and leave conflicting files as they are.")
def restore_command(ref: str, workspace: Path, dry_run: bool, as_json: bool, yes: bool,
                    overwrite: tuple[str, ...], keep_conflicts: bool) -> None:
    """Restore the watched files to before turn REF (a number, or u1, u2... to undo a restore)."""
    from pneuma.checkpoints import plan_restore, restore
    from pneuma.core.errors import ToolError

    try:
        store = _open(workspace)
        plan = plan_restore(store, ref)
        if not dry_run and not yes and not as_json:
            _print_plan(plan, heading=True)
            if not plan.steps:
                return
            unresolved = [p for p in plan.conflicts if p not in overwrite]
            if unresolved and not keep_conflicts:
                _fail(f"{len(unresolved)} file(s) changed by hand after the turn would be "
                      "overwritten; add --overwrite PATH for each, or --keep-conflicts")
            if not click.confirm("Restore these files?", default=False, err=True):
                click.echo("Nothing changed.", err=True)
                sys.exit(1)
        result = restore(store, ref, dry_run=dry_run, overwrite_conflicts=overwrite,
                         keep_conflicts=keep_conflicts)
    except ToolError as exc:
        _fail(exc.message)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, indent=1))
        return
    if dry_run or yes:
        _print_plan(result.plan, heading=True, dry_run=dry_run)
    if dry_run:
        return
    _print_result(result, store.workspace)


def _print_plan(plan: Any, *, heading: bool, dry_run: bool = False) -> None:
    what = "before turn " + plan.target if not plan.target.startswith("u") \
        else "before the restore that left undo point " + plan.target
    if heading:
        verb = "would" if dry_run else "will"
        click.echo(f"Restoring to {what} {verb} change {len(plan.steps)} file(s)"
                   + (" (dry run: nothing is changed)." if dry_run else "."))
    labels = {"write": "restore", "create": "recreate", "delete": "delete"}
    for step in plan.steps:
        mark = "  CONFLICT: changed by hand after the turn" if step.conflict else ""
        click.echo(f"  {labels[step.action]:<9} {step.path}{mark}")
    for item in plan.left_as_is:
        click.echo(f"  left as is {item['path']}: {item['why']}")
    if plan.conflicts:
        click.echo(f"{len(plan.conflicts)} conflict(s): these were edited after the agent's "
                   "turn; they are overwritten only with --overwrite PATH.")


def _print_result(result: Any, workspace: Path) -> None:
    click.echo(f"Restored {len(result.restored)} file(s).")
    for path in result.kept_conflicts:
        click.echo(f"  kept as it is (conflict): {path}")
    for item in result.failed:
        click.echo(f"  FAILED {item['path']}: {item['error']}")
    if result.undo:
        click.echo(f"Undo this with: pneuma checkpoints restore {result.undo} -w {workspace}")
    if result.failed:
        sys.exit(1)


# --- a turn in the mode's terms, and reverting one change (issue 28) ---


def _described_turns(store: Any) -> Any:
    """The turns of ``store`` in the terms of the workspace's stored mode
    (as `pneuma export` finds it); per file for a mode without a describer."""
    from pneuma.checkpoints.described_turns import DescribedTurns
    from pneuma.workspace.mode_switch import workspace_mode

    return DescribedTurns(store, workspace_mode(store.workspace))


def _english(label: Any) -> str:
    return label if isinstance(label, str) else str(label.get("en") or
                                                    next(iter(label.values()), ""))


@checkpoints.command("show")
@click.argument("ref")
@_WORKSPACE
@_JSON
def show_command(ref: str, workspace: Path, as_json: bool) -> None:
    """What turn REF changed, in the mode's terms (slides, sections, nodes...), with each change's id."""
    from pneuma.checkpoints.described_turns import described_json
    from pneuma.core.errors import ToolError

    try:
        store = _open(workspace)
        turns = _described_turns(store)
        canonical, turn = turns.describe(ref)
        checkpoint = store.get(canonical)
    except ToolError as exc:
        _fail(exc.message)
    if as_json:
        click.echo(json.dumps(described_json(canonical, turn), ensure_ascii=False, indent=1))
        return
    how = f"in the {turns.mode} mode's terms" if turn.source == "mode" else "per file"
    click.echo(f"Turn {canonical} ({checkpoint.message}): {len(turn.changes)} change(s), {how}.")
    if turn.warning:
        click.echo(f"  note: {turn.warning}")
    width = max((len(c.id) for c in turn.changes), default=0)
    for change in turn.changes:
        mark = "" if change.revertible else "  (cannot be reverted on its own)"
        click.echo(f"  {change.id:<{width}}  {_english(change.where)}: "
                   f"{_english(change.what)}{mark}")
    if turn.changes:
        click.echo(f"\n`pneuma checkpoints revert {canonical} ID -w DIR` reverts one of them "
                   "and keeps the rest.")


@checkpoints.command("revert")
@click.argument("ref")
@click.argument("change_id")
@_WORKSPACE
@_JSON
@click.option("--force", is_flag=True,
              help="Overwrite the change's files even if they changed since the turn.")
def revert_command(ref: str, change_id: str, workspace: Path, as_json: bool,
                   force: bool) -> None:
    """Revert one change of turn REF (its id from `pneuma checkpoints show`), keeping the rest."""
    from pneuma.checkpoints.revert_change import revert_change
    from pneuma.core.errors import ToolError

    try:
        store = _open(workspace)
        turns = _described_turns(store)
        try:
            result = revert_change(store, turns, ref, change_id)
        except ToolError as exc:
            conflicts = (exc.details or {}).get("conflicts") \
                if exc.code == "E_CONFLICT" else None
            if not conflicts:
                raise
            if not force:
                _refuse_conflicts(conflicts, as_json)
            result = revert_change(store, turns, ref, change_id,
                                   overwrite=[c["path"] for c in conflicts])
    except ToolError as exc:
        _fail(exc.message)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, indent=1))
    else:
        what = f"{_english(result.change.where)}: {_english(result.change.what)}"
        if not result.reverted and not result.failed:
            click.echo(f"Nothing to revert: {what} is already undone.")
        else:
            click.echo(f"Reverted {what} (turn {result.ref}): {', '.join(result.reverted)}")
        for item in result.failed:
            click.echo(f"  FAILED {item['path']}: {item['error']}")
        if result.undo:
            click.echo(f"Undo this with: pneuma checkpoints restore {result.undo} "
                       f"-w {store.workspace}")
    if result.failed:
        sys.exit(1)


def _refuse_conflicts(conflicts: list[dict[str, str]], as_json: bool) -> NoReturn:
    """Exit 1 listing the files changed since the turn (nothing written)."""
    if as_json:
        click.echo(json.dumps({"reverted": [], "conflicts": conflicts, "undoRef": None},
                              ensure_ascii=False, indent=1))
    else:
        why = {"edited_by_hand": "edited by hand since the turn",
               "changed_by_a_later_turn": "changed by a later turn"}
        click.echo("Nothing reverted: these files changed since the turn and would be "
                   "overwritten:", err=True)
        for item in conflicts:
            click.echo(f"  {item['path']}: {why.get(item['reason'], item['reason'])}", err=True)
        click.echo("Add --force to overwrite them (the revert can be undone).", err=True)
    sys.exit(1)
