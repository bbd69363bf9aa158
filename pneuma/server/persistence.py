"""Per-workspace session state in ``W/.pneuma/``: ``session.json`` (ids for
routing and ``--resume``, written atomically so a crash leaves the old or
the new file, never half) and the conversation's append-only log
(``conversation.db``, see ``conversation_log``).

Earlier versions kept the conversation in ``history.json``, rewritten
whole every few seconds; ``open_conversation`` imports such a file into the
log on the first start and renames it ``history.json.imported``.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from pneuma.core.backend import NO_AGENT_BACKEND
from pneuma.server.conversation_log import (
    ConversationLog,
    ConversationLogError,
    ConversationLogRefused,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger(__name__)

STATE_DIR = ".pneuma"
SESSION_FILE = "session.json"
# The conversation before the log (read once, to import it).
HISTORY_FILE = "history.json"
IMPORTED_SUFFIX = ".imported"
# The highest seq number a run may hand out before it writes a higher one
# (see SeqReservation).
SEQ_FILE = "seq.json"
# How many seq numbers one write of SEQ_FILE reserves: a write (with its
# fsyncs) per this many broadcasts, and at most this big a jump in the
# numbering after a crash.
SEQ_BLOCK = 8192


@dataclass
class StoredSession:
    session_id: str
    mode: str
    backend: str
    agent_session_id: str | None = None
    last_seq: int = 0
    # The conversation of a ``history.json`` still to import into the log.
    history: list[dict[str, Any]] = field(default_factory=list)
    resumed: bool = False
    # The workspace's current conversation (docs/conversations.md); None:
    # the one whose id is the session's (a session.json from before there
    # were several, or a new session).
    conversation_id: str | None = None


class SessionState(TypedDict):
    """What ``save_session`` stores, by keyword."""

    session_id: str
    mode: str
    backend: str
    agent_session_id: str | None
    last_seq: int
    conversation_id: NotRequired[str | None]


# The conversation is the owner's alone, as the workspace config is.
STATE_FILE_MODE = 0o600


def encode_json(data: Any) -> bytes:
    """The bytes of a state file: compact UTF-8 JSON."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (an agent's "\ud800" escape) has no UTF-8 form:
        # escape everything that is not ASCII rather than lose the save.
        return json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def write_files(files: list[tuple[Path, bytes]]) -> None:
    """Write encoded state files atomically, in order (safe in a worker
    thread: it touches nothing but the files)."""
    # Imported here: `pneuma run` reads the session id before its ready
    # line and should import no more than that needs.
    from pneuma.core.state_files import write_state_bytes

    for path, data in files:
        # Never through a link planted under .pneuma/: session.json holds
        # the agent's session id, and the folder is the owner's alone.
        write_state_bytes(path, data, STATE_FILE_MODE)


def _read_json(path: Path) -> Any:
    from pneuma.core.state_files import read_state_bytes

    try:
        return json.loads(read_state_bytes(path).decode("utf-8"))
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        # Keep the unreadable file for inspection and start afresh.
        backup = path.with_suffix(path.suffix + ".corrupt")
        path.replace(backup)
        log.warning("%s was unreadable (%s); moved it to %s", path, exc, backup.name)
        return None


def _as_seq(value: Any) -> int:
    """A stored seq number; a hand-edited or damaged value counts as 0
    rather than stopping ``pneuma run`` from starting."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value


# What session.json keeps of a session, besides its mode and seq.
_ENTRY_KEYS = ("sessionId", "agentSessionId", "conversationId")


def _entry(data: Any) -> dict[str, Any] | None:
    """One backend's last session as session.json holds it, or None."""
    if not isinstance(data, dict) or not isinstance(data.get("sessionId"), str):
        return None
    return {key: data[key] for key in _ENTRY_KEYS if isinstance(data.get(key), str)}


def _backend_entries(meta: Any) -> dict[str, dict[str, Any]]:
    """Each backend's last session (``byBackend``), the last run's own
    (the top level) included."""
    entries: dict[str, dict[str, Any]] = {}
    if not isinstance(meta, dict):
        return entries
    kept = meta.get("byBackend")
    for name, data in (kept.items() if isinstance(kept, dict) else ()):
        entry = _entry(data)
        if isinstance(name, str) and entry is not None:
            entries[name] = entry
    top = _entry(meta)
    if top is not None and isinstance(meta.get("backend"), str):
        entries[meta["backend"]] = top
    return entries


def _entry_to_resume(meta: Any, mode: str, backend: str) -> dict[str, Any] | None:
    """The stored session a start with ``backend`` resumes, or None for a
    new one: the last one this backend ran, even with others (or looks)
    in between; a look (``NO_AGENT_BACKEND``) resumes whatever ran last;
    a backend that never ran here takes over a last session no agent ever
    answered in (a look's), rather than leaving it as an empty conversation."""
    if not isinstance(meta, dict) or meta.get("mode") != mode:
        return None
    top = _entry(meta)
    if top is None:
        return None
    if backend == NO_AGENT_BACKEND or meta.get("backend") == backend:
        return top
    own = _backend_entries(meta).get(backend)
    if own is not None:
        return own
    return top if top.get("agentSessionId") is None else None


def peek_session_id(workspace: Path, mode: str, backend: str) -> tuple[str, bool]:
    """The id ``load_session`` will return (given it as ``new_session_id``)
    and whether it resumes a stored session, read from ``session.json``
    alone: the ready line needs the id before the history is worth loading."""
    try:
        meta = json.loads((workspace / STATE_DIR / SESSION_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = None
    entry = _entry_to_resume(meta, mode, backend)
    if entry is not None:
        return entry["sessionId"], True
    return str(uuid.uuid4()), False


def load_session(workspace: Path, mode: str, backend: str,
                 new_session_id: str | None = None) -> StoredSession:
    """The workspace's previous session when it was for the same mode and
    backend, else a new one (with ``new_session_id`` when given)."""
    state_dir = workspace / STATE_DIR
    meta = _read_json(state_dir / SESSION_FILE)
    entry = _entry_to_resume(meta, mode, backend)
    if entry is not None:
        history_data = _read_json(state_dir / HISTORY_FILE)
        messages: list[dict[str, Any]] = []
        # A run killed before its last save handed out numbers beyond the
        # saved lastSeq (tabs saw them): never hand them out again.
        last_seq = max(_as_seq(meta.get("lastSeq")), read_reserved_seq(workspace))
        if isinstance(history_data, dict) and isinstance(history_data.get("messages"), list):
            messages = [m for m in history_data["messages"] if isinstance(m, dict)]
            last_seq = max(last_seq, _as_seq(history_data.get("lastSeq")))
        return StoredSession(
            session_id=entry["sessionId"],
            mode=mode,
            backend=backend,
            agent_session_id=entry.get("agentSessionId"),
            last_seq=last_seq,
            # The legacy file is the top-level session's conversation.
            history=messages if entry["sessionId"] == meta["sessionId"] else [],
            resumed=True,
            conversation_id=entry.get("conversationId"),
        )
    return StoredSession(session_id=new_session_id or str(uuid.uuid4()), mode=mode,
                         backend=backend)


def _session_meta(session_id: str, mode: str, backend: str, agent_session_id: str | None,
                  last_seq: int, conversation_id: str | None) -> dict[str, Any]:
    meta = {
        "sessionId": session_id,
        "agentSessionId": agent_session_id,
        "mode": mode,
        "backend": backend,
        "lastSeq": last_seq,
    }
    # Written only when it is not the session's own id, so that a workspace
    # with one conversation keeps the file it always had.
    if conversation_id is not None and conversation_id != session_id:
        meta["conversationId"] = conversation_id
    return meta


def stored_state_matches(workspace: Path, **state: Unpack[SessionState]) -> bool:
    """Whether ``save_session`` with these values would write what the
    file already holds (so the save can be skipped)."""
    return not stale_files(encode_session(workspace, **state))


def stale_files(files: list[tuple[Path, bytes]]) -> list[tuple[Path, bytes]]:
    """Those of encoded state ``files`` that the disk does not hold as they are."""
    stale = []
    for path, data in files:
        try:
            current = path.read_bytes()
        except OSError:
            current = None
        if current != data:
            stale.append((path, data))
    return stale


def encode_session(
    workspace: Path,
    *,
    session_id: str,
    mode: str,
    backend: str,
    agent_session_id: str | None,
    last_seq: int,
    conversation_id: str | None = None,
) -> list[tuple[Path, bytes]]:
    """The state file of a session as (path, bytes): what ``save_session``
    writes, made where the session lives (the event loop) so that the
    writing can happen elsewhere. (The conversation is not in it: the log
    writes each message as it happens.)"""
    state_dir = workspace / STATE_DIR
    meta = _session_meta(session_id, mode, backend, agent_session_id, last_seq,
                         conversation_id)
    others = _other_backends(state_dir / SESSION_FILE, mode, backend)
    if others:
        meta["byBackend"] = others
    return [(state_dir / SESSION_FILE, encode_json(meta))]


def _other_backends(path: Path, mode: str, backend: str) -> dict[str, dict[str, Any]]:
    """The other backends' last sessions the file holds now (for the same
    mode), kept so that each resumes its own (``_entry_to_resume``)."""
    from pneuma.core.state_files import read_state_bytes

    try:
        meta = json.loads(read_state_bytes(path).decode("utf-8"))
    except (OSError, ValueError):  # missing, unreadable: nothing to keep
        return {}
    if not isinstance(meta, dict) or meta.get("mode") != mode:
        return {}
    entries = _backend_entries(meta)
    entries.pop(backend, None)
    entries.pop(NO_AGENT_BACKEND, None)  # a look's is whatever ran last: nothing of its own
    return dict(sorted(entries.items()))


def save_session(workspace: Path, **state: Unpack[SessionState]) -> None:
    """Write ``session.json`` (see ``encode_session``)."""
    write_files(encode_session(workspace, **state))


def try_open_log(state_dir: Path) -> ConversationLog | None:
    """The conversation log in ``state_dir``; None, with a warning, when it
    cannot be opened (a read-only folder): the session then goes on, its
    chat kept in memory only. A log that must not be used now (another
    process holds it) raises ``ConversationLogRefused``: the start stops
    with its one line rather than run beside a conversation it cannot keep."""
    try:
        return ConversationLog.open(state_dir)
    except ConversationLogRefused:
        raise
    except (OSError, ConversationLogError) as exc:
        log.warning("the conversation cannot be saved: %s", exc)
        return None


def open_conversation(workspace: Path, stored: StoredSession) -> ConversationLog | None:
    """The workspace's conversation log, with ``stored``'s ``history.json``
    imported into it the first time (then renamed ``history.json.imported``,
    kept for the user, never read again)."""
    state_dir = workspace / STATE_DIR
    conversation = try_open_log(state_dir)
    if conversation is None:
        return None
    legacy = state_dir / HISTORY_FILE
    if stored.history and conversation.is_empty(stored.session_id):
        count = conversation.import_messages(stored.session_id, _legacy_rows(stored.history))
        log.info("imported %d messages of %s into %s", count, legacy, conversation.path.name)
    if legacy.exists():
        try:
            legacy.replace(legacy.with_name(HISTORY_FILE + IMPORTED_SUFFIX))
        except OSError as exc:
            log.warning("could not rename %s: %s", legacy, exc)
    return conversation


def _legacy_rows(messages: list[dict[str, Any]]) -> list[tuple[int, str | None, str, str]]:
    """``history.json`` messages as log rows (seq, message id, kind, text),
    an assistant message's blocks already merged there into one message."""
    rows = []
    for message in messages:
        kind = message.get("type")
        if not isinstance(kind, str):
            continue
        inner = message.get("message")
        message_id = inner.get("id") if kind == "assistant" and isinstance(inner, dict) else None
        rows.append((_as_seq(message.get("seq")), message_id if isinstance(message_id, str) else None,
                     kind, encode_json(message).decode("utf-8", "surrogatepass")))
    return rows


def read_reserved_seq(workspace: Path) -> int:
    """The highest seq number an earlier run reserved (0 when none did)."""
    try:
        data = json.loads((workspace / STATE_DIR / SEQ_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    return _as_seq(data.get("reservedThrough")) if isinstance(data, dict) else 0


class SeqReservation:
    """Writes ``SEQ_FILE`` ahead of use, so that seq numbers are never
    handed out twice, even across a kill -9.

    The session saves its ``lastSeq`` only every few seconds; a run killed
    in between restarted from the saved value and reused numbers tabs had
    already seen, and a tab reconnecting with such a ``last_seq`` got the
    new run's events after it only, silently missing the ones before.
    With the reservation on disk, a restarted run starts above every number
    the crashed one could have used, so such a ``last_seq`` is older than
    the replay buffer and gets the full ``message_history``."""

    def __init__(self, workspace: Path) -> None:
        self.path = workspace / STATE_DIR / SEQ_FILE

    def reserve(self, seq: int) -> int:
        """Record that numbers up to ``seq`` and a block beyond may be used;
        returns the new limit. When the file cannot be written (a full
        disk) the session goes on rather than stop talking, and tries again
        at the next block: numbers may then be reused after a crash, as
        before there was a reservation."""
        through = seq + SEQ_BLOCK - 1
        try:
            self._write(through)
        except OSError as exc:
            _say_not_written(f"could not reserve seq numbers in {self.path}", exc)
        return through

    def release(self, last_used: int) -> None:
        """At a clean exit: only numbers up to ``last_used`` were used, so a
        restart continues right after them."""
        try:
            self._write(last_used)
        except OSError as exc:
            _say_not_written(f"could not write {self.path}", exc)

    def _write(self, through: int) -> None:
        write_files([(self.path, encode_json({"reservedThrough": through}))])


def _say_not_written(what: str, exc: OSError) -> None:
    """A full disk is one line (the saving status says the rest); anything
    else keeps its traceback."""
    from pneuma.server.saving_status import pause_reason

    reason = pause_reason(exc)
    if reason is not None:
        log.warning("%s: %s", what, reason)
    else:
        log.exception(what)
