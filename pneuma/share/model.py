"""The data of a shared file (docs/sharing.md, "Share as one file").

A shared file is one HTML page with one JSON document inside, in
``<script type="application/json" id="pneuma-share">``. The page (the
player, pneuma/share/static/) reads it to show the artifact, the chat and
the timeline; ``pneuma open`` reads it to make a workspace again. This
module is the one definition of that document, version 1::

    {"version": 1, "mode": "slide", "title": "...", "createdAt": <ms>,
     "conversationId": "..." | null,
     "files": {<sha256>: <base64 of zlib-compressed bytes>},
     "start": {<path>: <sha256>},                the files before the first turn
     "turns": [{"ref": "3", "message": "...", "at": <ms>,
                "tree": {<path>: <sha256>},      the files after the turn
                "changes": [Change.to_json(), ...], "source": "mode" | "files"}],
     "conversation": [{"role": "user" | "assistant", "text": "...", "at": <ms> | null,
                       "tools": [{"name": "...", "summary": "..."}]}],
     "leftOut": [{"path": "...", "reason": "..."}],
     "viewer": {...}}                             what the player embeds for the mode

Times are milliseconds since the epoch (UTC). A content is stored once
however many turns hold it; its key is the SHA-256 of the uncompressed
bytes, checked when read.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError

SHARE_VERSION = 1
DATA_ELEMENT_ID = "pneuma-share"
# The data's element as the template holds it (empty) and as a shared file
# holds it (filled); the builder fills the first one it finds.
EMPTY_DATA_ELEMENT = f'<script type="application/json" id="{DATA_ELEMENT_ID}"></script>'
_DATA_ELEMENT = re.compile(
    r'<script type="application/json" id="' + DATA_ELEMENT_ID + r'">(.*?)</script>', re.S)
# A shared file bigger than this is not read (the builder's default cap is 50 MB).
READ_LIMIT = 512 * 1024 * 1024

Tree = dict[str, str]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pack_content(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 9)).decode("ascii")


def unpack_content(packed: str, digest: str) -> bytes:
    try:
        data = zlib.decompress(base64.b64decode(packed, validate=True))
    except (ValueError, zlib.error) as exc:
        raise ToolError("E_PARSE_FAIL", f"a content of the shared file is damaged: {exc}",
                        details={"hash": digest}) from exc
    if content_hash(data) != digest:
        raise ToolError("E_PARSE_FAIL", "a content of the shared file does not match its hash",
                        details={"hash": digest})
    return data


@dataclass
class ToolCall:
    name: str
    summary: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "summary": self.summary}


@dataclass
class SharedMessage:
    role: str
    text: str
    at: int | None = None
    tools: list[ToolCall] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "text": self.text, "at": self.at,
                "tools": [t.to_json() for t in self.tools]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "SharedMessage":
        return cls(role=str(data["role"]), text=str(data.get("text") or ""),
                   at=_int_or_none(data.get("at")),
                   tools=[ToolCall(str(t.get("name", "")), str(t.get("summary", "")))
                          for t in data.get("tools") or []])


@dataclass
class SharedTurn:
    ref: str
    message: str
    at: int
    tree: Tree
    changes: list[dict[str, Any]] = field(default_factory=list)
    source: str = "files"

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "message": self.message, "at": self.at,
                "tree": dict(self.tree), "changes": list(self.changes), "source": self.source}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "SharedTurn":
        return cls(ref=str(data["ref"]), message=str(data.get("message") or ""),
                   at=int(data.get("at") or 0), tree=_tree(data.get("tree")),
                   changes=list(data.get("changes") or []),
                   source=str(data.get("source") or "files"))


@dataclass
class ShareData:
    """One shared file's document. ``files`` holds the packed contents
    (``pack_content``) by their hash; ``contents`` reads one back."""

    mode: str
    title: str
    created_at: int
    files: dict[str, str] = field(default_factory=dict)
    start: Tree = field(default_factory=dict)
    turns: list[SharedTurn] = field(default_factory=list)
    conversation: list[SharedMessage] = field(default_factory=list)
    conversation_id: str | None = None
    left_out: list[dict[str, str]] = field(default_factory=list)
    viewer: dict[str, Any] = field(default_factory=dict)
    version: int = SHARE_VERSION

    def add_content(self, data: bytes) -> str:
        digest = content_hash(data)
        if digest not in self.files:
            self.files[digest] = pack_content(data)
        return digest

    def contents(self, digest: str) -> bytes:
        packed = self.files.get(digest)
        if packed is None:
            raise ToolError("E_PARSE_FAIL", "the shared file lacks a content it names",
                            details={"hash": digest})
        return unpack_content(packed, digest)

    def tree_at(self, turn: int | None = None) -> Tree:
        """The files after turn ``turn`` (1-based, as listed; None: the
        last), or before the first turn for 0."""
        if turn is None:
            return dict(self.turns[-1].tree) if self.turns else dict(self.start)
        if turn == 0:
            return dict(self.start)
        if not 1 <= turn <= len(self.turns):
            raise ToolError("E_BAD_ARGS", f"the shared file has turns 1 to {len(self.turns)}",
                            details={"turn": turn, "turns": len(self.turns)})
        return dict(self.turns[turn - 1].tree)

    def files_at(self, turn: int | None = None) -> dict[str, bytes]:
        return {path: self.contents(digest) for path, digest in self.tree_at(turn).items()}

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "mode": self.mode, "title": self.title,
                "createdAt": self.created_at, "conversationId": self.conversation_id,
                "files": dict(self.files), "start": dict(self.start),
                "turns": [t.to_json() for t in self.turns],
                "conversation": [m.to_json() for m in self.conversation],
                "leftOut": list(self.left_out), "viewer": dict(self.viewer)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ShareData":
        version = data.get("version")
        if version != SHARE_VERSION:
            raise ToolError("E_UNSUPPORTED", f"shared file version {version!r} is not "
                            f"one this Pneuma reads (it reads {SHARE_VERSION})",
                            details={"version": version})
        try:
            files = {str(k): str(v) for k, v in (data.get("files") or {}).items()}
            return cls(mode=str(data["mode"]), title=str(data.get("title") or ""),
                       created_at=int(data.get("createdAt") or 0), files=files,
                       start=_tree(data.get("start")),
                       turns=[SharedTurn.from_json(t) for t in data.get("turns") or []],
                       conversation=[SharedMessage.from_json(m)
                                     for m in data.get("conversation") or []],
                       conversation_id=data.get("conversationId"),
                       left_out=list(data.get("leftOut") or []),
                       viewer=dict(data.get("viewer") or {}))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ToolError("E_PARSE_FAIL", f"the shared file's data is malformed: {exc}") from exc


def data_json_for_html(data: ShareData) -> str:
    """The document as text safe inside a ``<script>`` element: every ``<``
    is escaped (``\\u003c``), so no ``</script>`` or ``<!--`` in a message
    ends the element early."""
    text = json.dumps(data.to_json(), ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def fill_template(template: str, data: ShareData) -> str:
    """``template`` with its empty data element filled with ``data``."""
    if EMPTY_DATA_ELEMENT not in template:
        raise ToolError("E_INTERNAL", "the share page's template has no data element",
                        details={"expected": EMPTY_DATA_ELEMENT})
    filled = EMPTY_DATA_ELEMENT.replace("></script>", ">" + data_json_for_html(data) + "</script>")
    return template.replace(EMPTY_DATA_ELEMENT, filled, 1)


def parse_share_html(html: str) -> ShareData:
    match = _DATA_ELEMENT.search(html)
    if match is None or not match.group(1).strip():
        raise ToolError("E_PARSE_FAIL", "this is not a Pneuma shared file (no share data in it)")
    try:
        document = json.loads(match.group(1))
    except json.JSONDecodeError as exc:
        raise ToolError("E_PARSE_FAIL", f"the shared file's data is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise ToolError("E_PARSE_FAIL", "the shared file's data is not a JSON object")
    return ShareData.from_json(document)


def read_share_file(path: Path) -> ShareData:
    """The data of the shared file at ``path`` (E_NOT_FOUND, E_TOO_LARGE,
    E_PARSE_FAIL, E_UNSUPPORTED for a newer version)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > READ_LIMIT:
            raise ToolError("E_TOO_LARGE", f"{path} is {size} bytes, more than a shared file "
                            f"may be ({READ_LIMIT})", details={"path": str(path)})
        html = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ToolError("E_NOT_FOUND", f"{path} does not exist",
                        details={"path": str(path)}) from exc
    except UnicodeDecodeError as exc:
        raise ToolError("E_ENCODING", f"{path} is not UTF-8 text",
                        details={"path": str(path)}) from exc
    except OSError as exc:
        raise ToolError("E_IO", f"{path} cannot be read: {exc}",
                        details={"path": str(path)}) from exc
    return parse_share_html(html)


def _tree(value: Any) -> Tree:
    if not value:
        return {}
    if not isinstance(value, dict):
        raise ValueError("a tree is an object of path to hash")
    return {str(k): str(v) for k, v in value.items()}


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
