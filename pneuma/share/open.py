"""``pneuma open FILE.html``: a new workspace from a shared file
(docs/sharing.md, "Open a shared file").

The files are those of the last turn (or of a chosen one); the mode is
recorded as ``pneuma init`` records it; the conversation goes into the
workspace's conversation log as history the person can read but the agent
never lived: the agent starts a fresh session, and the first message the
person sends carries a short summary of that history (``imported.py``).

A shared file is untrusted input. Every path in it is checked as the
sandbox checks an agent's (no absolute path, no ``..``, nothing under
``.pneuma/``, ``.git/`` or another forbidden folder, nothing that configures
the agent such as ``.claude/``); every content is inflated no further than
a bound and checked against its hash; a folder that holds anything is never
written into.
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path

from pneuma.core.errors import ToolError
from pneuma.core.sandbox import READ_ONLY_TOP, Sandbox
from pneuma.share import imported
from pneuma.share.history import write_turns
from pneuma.share.model import ShareData, content_hash, read_share_file

MAX_FILES = 20_000
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
_MODE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_UNSAFE_NAME = re.compile(r"[^\w\- .]+", re.UNICODE)


@dataclass(frozen=True)
class OpenedShare:
    """What ``open_share`` made."""

    workspace: Path
    mode: str
    title: str
    turn: int  # the turn whose files were written (0: before the first)
    turns: int
    files: int
    messages: int
    conversation_id: str | None


def open_share(source: Path, workspace: Path | None = None, turn: int | None = None,
               backend: str = "claude-code") -> OpenedShare:
    """Make a new workspace from the shared file ``source`` (E_BAD_ARGS for
    hostile data, E_CONFLICT for a folder that is not empty)."""
    data = read_share_file(source)
    target = workspace if workspace is not None else default_workspace(source, data)
    return open_share_data(data, source.name, target, turn, backend=backend)


def open_share_data(data: ShareData, source_name: str, target: Path, turn: int | None = None,
                    backend: str = "claude-code") -> OpenedShare:
    """``open_share`` for a shared file already read (the launcher's drop)."""
    mode = _checked_mode(data.mode)
    data.tree_at(turn)  # a turn the file has
    chosen = len(data.turns) if turn is None else turn
    unpacker = _Unpacker(data)
    trees = [unpacker.tree(data.start)] + [unpacker.tree(t.tree) for t in data.turns[:chosen]]
    _refuse_non_empty(target)
    target.mkdir(parents=True, exist_ok=True)
    conversation_id = str(uuid.uuid4()) if data.conversation else None
    recorded = write_turns(target, mode, [t.message for t in data.turns[:chosen]], trees,
                           conversation_id)
    from pneuma.workspace.params import record_mode

    record_mode(target, mode, create=True)
    if conversation_id is not None:
        imported.import_conversation(target, conversation_id, data, source_name=source_name,
                                     backend=backend, recorded=recorded)
    return OpenedShare(workspace=target, mode=mode, title=data.title, turn=chosen,
                       turns=len(data.turns), files=len(trees[-1]),
                       messages=len(data.conversation), conversation_id=conversation_id)


def default_workspace(source: Path, data: ShareData) -> Path:
    """Beside the file, named after its title (else the file's own name)."""
    return source.resolve().parent / folder_name(data, source.stem)


def folder_name(data: ShareData, fallback: str) -> str:
    """A folder's name for the shared file's work: its title, made safe."""
    return _UNSAFE_NAME.sub("-", data.title).strip(" .-")[:60] or fallback


def _checked_mode(name: str) -> str:
    if not _MODE_NAME.match(name):
        raise ToolError("E_BAD_ARGS", "the shared file names no valid mode",
                        details={"mode": name[:80]})
    return name


def _refuse_non_empty(target: Path) -> None:
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise ToolError("E_CONFLICT", f"{target} exists and is not a folder",
                        details={"path": str(target)})
    if target.is_dir() and any(target.iterdir()):
        raise ToolError("E_CONFLICT", f"{target} is not empty; a shared file opens into a new "
                        "folder", details={"path": str(target)},
                        hint="Name an empty or new folder with -w DIR.")


def checked_path(rel: str) -> str:
    """A path from the shared file in canonical form, or E_BAD_ARGS."""
    try:
        canonical = Sandbox(Path("/nonexistent-root")).normalize(rel)
    except ToolError as exc:  # a file's data is what is wrong, whatever the sandbox calls it
        raise ToolError("E_BAD_ARGS", f"the shared file holds a path that cannot be opened: "
                        f"{exc.message}", details={"path": str(rel)[:200],
                                                   "reason": exc.code}) from exc
    if canonical.split("/", 1)[0] in READ_ONLY_TOP:
        raise ToolError("E_BAD_ARGS", f"{rel!r} configures the agent; a shared file may not "
                        "hold it", details={"path": rel[:200], "reason": "agent_config"})
    return canonical


class _Unpacker:
    """Each tree's files, their paths checked and each content inflated
    once (a content many turns hold counts once towards the bounds)."""

    def __init__(self, data: ShareData) -> None:
        self._data = data
        self._contents: dict[str, bytes] = {}
        self._total = 0

    def tree(self, tree: dict[str, str]) -> dict[str, bytes]:
        if len(tree) > MAX_FILES:
            raise ToolError("E_BAD_ARGS", f"the shared file holds {len(tree)} files; at most "
                            f"{MAX_FILES} are opened", details={"files": len(tree)})
        files: dict[str, bytes] = {}
        for rel, digest in tree.items():
            canonical = checked_path(rel)
            if canonical in files:
                raise ToolError("E_BAD_ARGS", f"the shared file names {canonical!r} twice",
                                details={"path": canonical})
            files[canonical] = self._content(digest, canonical)
        _refuse_file_under_file(files)
        return files

    def _content(self, digest: str, rel: str) -> bytes:
        found = self._contents.get(digest)
        if found is None:
            found = _inflate(self._data, digest, rel, MAX_FILE_BYTES)
            self._total += len(found)
            if self._total > MAX_TOTAL_BYTES:
                raise ToolError("E_BAD_ARGS", f"the shared file's files come to more than "
                                f"{MAX_TOTAL_BYTES} bytes", details={"reason": "too_large"})
            self._contents[digest] = found
        return found


def _inflate(data: ShareData, digest: str, rel: str, limit: int) -> bytes:
    """One content, never inflated past ``limit`` (a small file can hold a
    huge one compressed)."""
    packed = data.files.get(digest)
    if packed is None:
        raise ToolError("E_BAD_ARGS", f"the shared file lacks the content of {rel!r}",
                        details={"path": rel, "hash": digest})
    try:
        inflater = zlib.decompressobj()
        content = inflater.decompress(base64.b64decode(packed, validate=True), limit + 1)
    except (binascii.Error, ValueError, zlib.error) as exc:
        raise ToolError("E_BAD_ARGS", f"the content of {rel!r} is damaged: {exc}",
                        details={"path": rel}) from exc
    if len(content) > limit or inflater.unconsumed_tail:
        raise ToolError("E_BAD_ARGS", f"{rel!r} is larger than {limit} bytes",
                        details={"path": rel, "reason": "too_large", "limit": limit})
    if content_hash(content) != digest:
        raise ToolError("E_BAD_ARGS", f"the content of {rel!r} does not match its hash",
                        details={"path": rel, "hash": digest})
    return content


def _refuse_file_under_file(files: dict[str, bytes]) -> None:
    """``a`` and ``a/b`` cannot both be files."""
    folders = {rel.rsplit("/", 1)[0] for rel in files if "/" in rel}
    parents = {"/".join(folder.split("/")[:i + 1])
               for folder in folders for i in range(folder.count("/") + 1)}
    clash = sorted(parents & files.keys())
    if clash:
        raise ToolError("E_BAD_ARGS", f"the shared file holds {clash[0]!r} both as a file "
                        "and as a folder", details={"path": clash[0]})
