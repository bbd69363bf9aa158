"""A slide workspace with N recorded turns and their conversation, made
without an agent: for the share tests and benchmarks (docs/sharing.md).

Turn k rewrites slide k's title to ``Slide k, turn k`` (turn 1 adds the
deck), each recorded in the checkpoint store as the turn listener records
it (``record`` before, ``turn_ended`` after); the conversation log gets the
person's message and an answer with one tool call per turn.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from pneuma.checkpoints.store import Checkpoints
from pneuma.server.conversation_log import ConversationLog
from pneuma.server.conversations import title_from

SLIDE_WATCH = ["manifest.json", "theme.css", "slides/**/*.html", "assets/**/*"]


@dataclass
class SlideSession:
    workspace: Path
    conversation_id: str
    # The files after each turn, as written: {path: bytes}, one map a turn.
    after: list[dict[str, bytes]] = field(default_factory=list)


def slide_html(number: int, title: str, body: str = "") -> str:
    return (f'<section class="slide">\n  <h1>{title}</h1>\n'
            f"  <p>Point {number}: {body or 'what this slide says.'}</p>\n</section>\n")


def make_slide_session(workspace: Path, turns: int, *, slides: int = 5,
                       planted: str = "", answer_extra: str = "",
                       asset_bytes: int = 0) -> SlideSession:
    """``workspace`` as ``turns`` turns of a slide session left it.
    ``planted`` goes into every message of the person (a secret a test
    looks for), ``answer_extra`` into every answer; ``asset_bytes``: an
    incompressible asset of that size added by turn 1."""
    workspace.mkdir(parents=True, exist_ok=True)
    state = workspace / ".pneuma"
    state.mkdir(exist_ok=True)
    conversation_id = str(uuid.uuid4())
    # As `pneuma run` leaves it: the next run resumes this conversation.
    (state / "session.json").write_text(json.dumps(
        {"sessionId": conversation_id, "agentSessionId": None, "mode": "slide",
         "backend": "claude-code", "lastSeq": turns * 3 + 1}), encoding="utf-8")
    store = Checkpoints(workspace, SLIDE_WATCH)
    session = SlideSession(workspace, conversation_id)
    log = ConversationLog.open(state)
    try:
        log.ensure_conversation(conversation_id)
        rows: list[tuple[int, str | None, str, str]] = []
        titles = [f"Slide {n}" for n in range(1, slides + 1)]
        for turn in range(1, turns + 1):
            message = f"Turn {turn}: retitle slide {(turn - 1) % slides + 1}. {planted}".strip()
            store.record(message, conversation=conversation_id)
            titles[(turn - 1) % slides] = f"Slide {(turn - 1) % slides + 1}, turn {turn}"
            _write_deck(workspace, titles, turn, asset_bytes)
            store.turn_ended()
            session.after.append(_files(workspace))
            stamp = 1_700_000_000 + turn * 60
            rows.append((turn * 3, None, "user_message", json.dumps(
                {"type": "user_message", "content": message, "timestamp": stamp})))
            rows.append((turn * 3 + 1, f"msg_{turn}", "assistant", json.dumps({
                "type": "assistant", "message": {"id": f"msg_{turn}", "role": "assistant",
                                                 "content": [
                    {"type": "thinking", "thinking": f"secret thoughts of turn {turn}"},
                    {"type": "tool_use", "id": f"tu_{turn}", "name": "Edit",
                     "input": {"file_path": str(workspace / "slides" / "s.html")}},
                    {"type": "text", "text": f"Done with turn {turn}. {answer_extra}".strip()},
                ]}})))
        log.import_messages(conversation_id, rows)
        # Titled by the person's first message, as a served session titles it.
        log.update_conversation(conversation_id, title=title_from(json.loads(rows[0][3])["content"])
                                if rows else "")
    finally:
        log.close()
    return session


def _write_deck(workspace: Path, titles: list[str], turn: int, asset_bytes: int) -> None:
    (workspace / "slides").mkdir(exist_ok=True)
    entries = []
    for number, title in enumerate(titles, start=1):
        name = f"slides/{number:02d}.html"
        (workspace / name).write_text(slide_html(number, title), encoding="utf-8")
        entries.append({"file": name, "title": title})
    (workspace / "manifest.json").write_text(json.dumps(
        {"title": "A shared deck", "slides": entries}, indent=2), encoding="utf-8")
    (workspace / "theme.css").write_text(".slide h1 { color: #234; }\n", encoding="utf-8")
    if asset_bytes and turn == 1:
        (workspace / "assets").mkdir(exist_ok=True)
        # Incompressible, so the size cap sees it as it is.
        (workspace / "assets" / "film.bin").write_bytes(random.Random(asset_bytes).randbytes(asset_bytes))


def _files(workspace: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for path in sorted(workspace.rglob("*")):
        rel = path.relative_to(workspace).as_posix()
        if path.is_file() and not rel.startswith(".pneuma/"):
            found[rel] = path.read_bytes()
    return found
