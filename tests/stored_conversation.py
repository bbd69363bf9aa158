"""What a workspace's conversation log holds, read as another process
would read it (the tests' view of ``.pneuma/conversation.db``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any


def logged(workspace: Path, session_id: str | None = None) -> list[dict[str, Any]]:
    """The logged messages (of ``session_id``, or all), oldest first; [] when
    there is no log yet."""
    path = workspace / ".pneuma" / "conversation.db"
    if not path.exists():
        return []
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT session_id, body FROM messages ORDER BY id").fetchall()
    finally:
        db.close()
    return [json.loads(body) for sid, body in rows if session_id in (None, sid)]
