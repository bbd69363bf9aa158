"""Gathers a shared file's data from a workspace and writes the file
(docs/sharing.md, "Share as one file").

The files come from the checkpoint store (docs/checkpoints.md): each turn
of the chosen conversation as the turn left it, each content stored once
(pneuma.share.model). What each turn changed comes from the mode's change
describer, or per file when the mode has none. The conversation comes from
the conversation log, scrubbed (pneuma.share.conversation, scrub). The
page around the data is the player's (pneuma.share.inline).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wcmatch import glob

from pneuma.checkpoints.described_turns import describer_of
from pneuma.checkpoints.model import Checkpoint, FileMap
from pneuma.checkpoints.store import Checkpoints
from pneuma.checkpoints.turn_files import describe_checkpoint
from pneuma.core.errors import ToolError
from pneuma.core.files import atomic_write_bytes
from pneuma.core.state_files import write_beneath
from pneuma.host.turn_changes import ChangeDescriber
from pneuma.share.conversation import (
    chosen_conversation,
    logged_messages,
    shared_messages,
)
from pneuma.share.model import (
    EMPTY_DATA_ELEMENT,
    ShareData,
    SharedTurn,
    Tree,
    content_hash,
    fill_template,
)
from pneuma.share.scrub import Scrubber, is_secret_file
from pneuma.workspace.mode_switch import workspace_mode

MB = 1024 * 1024
DEFAULT_MAX_BYTES = 50 * MB
# Never in a shared file, whatever the mode watches: Pneuma's own state, the
# agent's instructions and settings, and earlier exports (shared files among them).
_NEVER = (".pneuma/**", "CLAUDE.md", "AGENTS.md", ".claude/**", ".mcp.json", ".codex/**",
          "exports/**", ".git/**")
_GLOB_FLAGS = glob.GLOBSTAR | glob.DOTGLOB | glob.MATCHBASE
# Stands in for the player until pneuma.share.inline is installed: the data
# and a line saying so, with the same CSP the player has (nothing fetched).
_FALLBACK_PAGE = (
    "<!doctype html><html><head><meta charset=\"utf-8\">"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">"
    "<title>Pneuma shared file</title></head><body>"
    "<p>A Pneuma shared file. Open it with <code>pneuma open FILE.html</code>.</p>"
    f"{EMPTY_DATA_ELEMENT}</body></html>")


@dataclass
class ShareOptions:
    """What ``pneuma share`` was asked for."""

    conversation: str | None = None
    # Shared when ``conversation`` is None and the workspace has it (the one
    # a page shows: a new one has no message yet, then the newest goes).
    preferred_conversation: str | None = None
    chat: bool = True
    history: bool = True
    leave_out: list[str] = field(default_factory=list)
    max_bytes: int = DEFAULT_MAX_BYTES
    # Values that must not appear in the conversation (the session's token).
    secrets: list[str] = field(default_factory=list)
    mode: str | None = None


@dataclass
class Shared:
    """A shared file written: where, how big, what it holds."""

    path: Path
    size: int
    turns: int
    contents: int
    left_out: list[dict[str, str]]


def build_share(workspace: Path, options: ShareOptions | None = None) -> ShareData:
    """The shared file's data for ``workspace``."""
    options = options or ShareOptions()
    workspace = Path(workspace).resolve()
    mode = options.mode or workspace_mode(workspace)
    if mode is None:
        raise ToolError("E_BAD_ARGS", f"{workspace} has not been run with a mode yet",
                        hint="Run it once with `pneuma run --mode MODE -w DIR`.")
    store = _store_of(workspace, mode)
    conversation_id, title = chosen_conversation(workspace, options.conversation,
                                                 options.preferred_conversation)
    scrub = _scrubber(workspace, options.secrets)
    # A conversation's title is its first message's first words: the chat's.
    title = scrub(title) if options.chat and title else workspace.name
    data = ShareData(mode=mode, title=title,
                     created_at=int(time.time() * 1000), conversation_id=conversation_id)
    kept = _Kept(options.leave_out)
    turns = _turns_of(store, conversation_id)
    if not options.history:
        turns = turns[-1:]
    if turns:
        _add_turns(data, store, turns, mode, kept, with_start=options.history)
    else:
        data.start = _current_tree(data, store, kept)
    for turn in data.turns:
        # A turn's first words are the person's: they go where the chat goes.
        turn.message = scrub(turn.message) if options.chat else ""
    if options.chat and conversation_id is not None:
        data.conversation = shared_messages(logged_messages(workspace, conversation_id), scrub)
    data.left_out = kept.left_out()
    return data


def _store_of(workspace: Path, mode: str) -> Checkpoints:
    """The checkpoint store, watching what its newest checkpoint watched;
    without checkpoints, what the mode watches (when it is installed)."""
    store = Checkpoints.open_existing(workspace)
    if store.checkpoints():
        return store
    try:
        from pneuma.host.registry import get_mode

        viewer = get_mode(mode).manifest.viewer
    except LookupError:  # a mode not installed here: everything but the never-shared
        return store
    return Checkpoints(workspace, viewer.watch_patterns, viewer.ignore_patterns)


def _scrubber(workspace: Path, secrets: list[str]) -> Callable[[str], str]:
    scrubber = Scrubber.for_process(secrets)
    inside = str(workspace) + "/"

    def scrub(text: str) -> str:
        # A path inside the workspace reads as the page shows it: relative.
        return scrubber(text.replace(inside, "").replace(str(workspace), "."))

    return scrub


def render_share(data: ShareData) -> str:
    """The HTML of the shared file: the player's page with the data in it."""
    try:
        inline = importlib.import_module("pneuma.share.inline")
    except ImportError:
        return fill_template(_FALLBACK_PAGE, data)
    page: Callable[[str, ShareData], str] = inline.page
    return page(data.mode, data)


def write_share(workspace: Path, output: Path | None = None,
                options: ShareOptions | None = None) -> Shared:
    """Build, check the size and write the shared file (default
    ``W/exports/<name>-share.html``). E_TOO_LARGE over ``max_bytes``."""
    options = options or ShareOptions()
    workspace = Path(workspace).resolve()
    data = build_share(workspace, options)
    html = render_share(data).encode("utf-8")
    if len(html) > options.max_bytes:
        raise too_large(data, len(html), options.max_bytes)
    target = output if output is not None else workspace / "exports" / f"{workspace.name}-share.html"
    target = Path(target).resolve()
    if target.is_relative_to(workspace / ".pneuma"):
        raise ToolError("E_DENY_PATH", "a shared file is not written into .pneuma/",
                        details={"path": str(target)})
    if target.is_relative_to(workspace):
        # within the workspace: no folder on the way followed if it is a link
        write_beneath(workspace, target.relative_to(workspace).as_posix(), html)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, html)
    return Shared(target, len(html), len(data.turns), len(data.files), data.left_out)


# --- the turns ---------------------------------------------------------------

def _turns_of(store: Checkpoints, conversation_id: str | None) -> list[Checkpoint]:
    """The turns of the conversation, oldest first; every turn when none
    names it (a store recorded before turns named their conversation)."""
    turns = [c for c in store.checkpoints() if c.kind == "turn"]
    mine = [c for c in turns if conversation_id is not None and c.conversation == conversation_id]
    return mine or [c for c in turns if c.conversation is None] or turns


def _add_turns(data: ShareData, store: Checkpoints, turns: list[Checkpoint], mode: str,
               kept: "_Kept", *, with_start: bool) -> None:
    describer = describer_of(mode)
    everything = store.checkpoints()
    with store.blob_reader() as read:
        if with_start:
            data.start = _tree(data, turns[0].files, read, kept)
        for turn in turns:
            following = [c for c in everything if c.seq > turn.seq]
            after = store.state_after(turn, following)
            changes, source = _changes(store, describer, turn)
            data.turns.append(SharedTurn(
                ref=turn.ref, message=turn.message, at=turn.after_timestamp_ms or turn.timestamp_ms,
                tree=_tree(data, after, read, kept, store), changes=changes, source=source))


def _changes(store: Checkpoints, describer: ChangeDescriber | None,
             turn: Checkpoint) -> tuple[list[dict[str, Any]], str]:
    try:
        described = describe_checkpoint(store, describer, turn.ref)
    except ToolError:
        return [], "files"  # a turn still running: its changes are not known yet
    return [c.to_json() for c in described.changes], described.source


def _tree(data: ShareData, files: FileMap, read: Callable[[str, str], bytes], kept: "_Kept",
          store: Checkpoints | None = None) -> Tree:
    tree: Tree = {}
    for path, entry in sorted(files.items()):
        if not kept.wants(path):
            continue
        if entry.hash is None:
            kept.leave_out(path, f"not kept by the checkpoints ({entry.skipped or 'skipped'})")
            continue
        if entry.hash in data.files:
            # The store's hash is the content's SHA-256, the file's key: read each content once.
            tree[path] = entry.hash
            continue
        content = _content(read, entry.hash, path, store)
        if content is None:
            kept.leave_out(path, "its content is no longer stored")
            continue
        tree[path] = data.add_content(content)
    return tree


def _content(read: Callable[[str, str], bytes], digest: str, path: str,
             store: Checkpoints | None) -> bytes | None:
    """A recorded content; for the last turn's files, scanned and not yet
    stored, the file itself when it still holds that content."""
    try:
        return read(digest, path)
    except ToolError:
        if store is None:
            return None
    try:
        content, _ = store.sandbox.read_bytes(path, store.policy.max_file_bytes)
    except (ToolError, OSError):
        return None
    return content if content_hash(content) == digest else None


def _current_tree(data: ShareData, store: Checkpoints, kept: "_Kept") -> Tree:
    """A workspace without turns: its watched files as they are."""
    with store.blob_reader() as read:
        return _tree(data, store.current(), read, kept, store)


class _Kept:
    """Which files go into the shared file, and the ones left out, once each."""

    def __init__(self, leave_out: Iterable[str]) -> None:
        self.patterns = list(leave_out)
        self._left: dict[str, str] = {}

    def wants(self, path: str) -> bool:
        if glob.globmatch(path, list(_NEVER), flags=_GLOB_FLAGS & ~glob.MATCHBASE):
            return False
        if is_secret_file(path):
            self.leave_out(path, "a file that holds keys by custom")
            return False
        if self.patterns and glob.globmatch(path, self.patterns, flags=_GLOB_FLAGS):
            self.leave_out(path, "--leave-out")
            return False
        return True

    def leave_out(self, path: str, reason: str) -> None:
        self._left.setdefault(path, reason)

    def left_out(self) -> list[dict[str, str]]:
        return [{"path": p, "reason": r} for p, r in sorted(self._left.items())]


# --- the size cap --------------------------------------------------------------

def too_large(data: ShareData, size: int, limit: int) -> ToolError:
    """The error of a shared file over the cap: the biggest files, the
    turns that add most, and what to do."""
    named = _names_of_contents(data)
    biggest = sorted(data.files.items(), key=lambda item: len(item[1]), reverse=True)[:3]
    files = ", ".join(f"{named.get(h, h[:12])} ({_mb(len(p))})" for h, p in biggest)
    heavy = sorted(_added_by_turn(data).items(), key=lambda item: item[1], reverse=True)[:3]
    turns = ", ".join(f"turn {ref} ({_mb(n)})" for ref, n in heavy if n)
    message = (f"the shared file would be {_mb(size)}, over the {_mb(limit)} cap; biggest files: "
               f"{files or 'none'}" + (f"; turns that add most: {turns}" if turns else "")
               + "; try --no-history (only the last turn), --leave-out GLOB "
               "(e.g. --leave-out 'assets/**'), or --max-size")
    return ToolError("E_TOO_LARGE", message, details={
        "size": size, "limit": limit, "biggest": [named.get(h, h) for h, _ in biggest]},
        hint="Share with --no-history, or leave large assets out with --leave-out GLOB.")


def _names_of_contents(data: ShareData) -> dict[str, str]:
    named: dict[str, str] = {}
    for tree in [data.start, *(t.tree for t in data.turns)]:
        for path, digest in tree.items():
            named.setdefault(digest, path)
    return named


def _added_by_turn(data: ShareData) -> dict[str, int]:
    """Bytes of contents each turn holds that no earlier state held."""
    seen = set(data.start.values())
    added: dict[str, int] = {}
    for turn in data.turns:
        new = set(turn.tree.values()) - seen
        added[turn.ref] = sum(len(data.files[h]) for h in new)
        seen |= new
    return added


def _mb(size: int) -> str:
    return f"{size / MB:.1f} MB" if size >= MB / 10 else f"{size / 1024:.0f} KB"
