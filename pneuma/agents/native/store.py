"""``SessionStore``: tasks, sessions, messages, actions and usage in SQLite.

The file is ``W/.pneuma/native.sqlite3``. Everything the model saw (the
conversation in Messages-API form) is kept per session, so a restarted
``pneuma run`` continues the same conversation and lists the same tasks.
Writes are small and synchronous; WAL keeps readers out of the way.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from pneuma.api import check_sqlite_files

from .state import Task, TaskStatus

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    mode TEXT,
    selected_client_id TEXT,
    created_at REAL,
    updated_at REAL
);
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    title TEXT,
    status TEXT NOT NULL,
    selected_client_id TEXT,
    tab_id INTEGER,
    confirmed INTEGER DEFAULT 0,
    error TEXT,
    created_at REAL,
    updated_at REAL
);
CREATE INDEX IF NOT EXISTS tasks_by_session ON tasks(session_id, created_at);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    task_id TEXT,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at REAL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_id, id);
CREATE TABLE IF NOT EXISTS actions (
    id TEXT PRIMARY KEY,
    session_id TEXT,
    task_id TEXT,
    client_id TEXT,
    name TEXT,
    params TEXT,
    status TEXT,
    result TEXT,
    error TEXT,
    started_at REAL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT,
    task_id TEXT,
    model TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd REAL,
    at REAL
);
"""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class SessionStore:
    def __init__(self, path: Path) -> None:
        check_sqlite_files(path)  # its folders made, none of them or its files a link
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    @classmethod
    def for_workspace(cls, workspace: Path) -> SessionStore:
        return cls(workspace / ".pneuma" / "native.sqlite3")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, args)

    # -- sessions ------------------------------------------------------------

    def ensure_session(self, session_id: str, mode: str) -> None:
        now = time.time()
        self._exec(
            "INSERT OR IGNORE INTO sessions(id, mode, created_at, updated_at) VALUES (?,?,?,?)",
            (session_id, mode, now, now),
        )

    def selected_client(self, session_id: str) -> str | None:
        row = self._exec("SELECT selected_client_id FROM sessions WHERE id=?", (session_id,)).fetchone()
        return row["selected_client_id"] if row else None

    def set_selected_client(self, session_id: str, client_id: str | None) -> None:
        self._exec("UPDATE sessions SET selected_client_id=?, updated_at=? WHERE id=?",
                   (client_id, time.time(), session_id))

    # -- tasks ---------------------------------------------------------------

    def save_task(self, task: Task) -> None:
        self._exec(
            "INSERT INTO tasks(id, session_id, title, status, selected_client_id, tab_id, confirmed,"
            " error, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT(id) DO UPDATE SET title=excluded.title, status=excluded.status,"
            " selected_client_id=excluded.selected_client_id, tab_id=excluded.tab_id,"
            " confirmed=excluded.confirmed, error=excluded.error, updated_at=excluded.updated_at",
            (task.id, task.session_id, task.title, task.status.value, task.selected_client_id,
             task.tab_id, int(task.confirmed), task.error, task.created_at, task.updated_at),
        )

    def tasks(self, session_id: str) -> list[Task]:
        rows = self._exec("SELECT * FROM tasks WHERE session_id=? ORDER BY created_at, rowid",
                          (session_id,)).fetchall()
        return [self._task(row) for row in rows]

    def task(self, task_id: str) -> Task | None:
        row = self._exec("SELECT * FROM tasks WHERE id=?", (task_id,)).fetchone()
        return self._task(row) if row else None

    @staticmethod
    def _task(row: sqlite3.Row) -> Task:
        return Task(
            id=row["id"], session_id=row["session_id"], title=row["title"] or "",
            status=TaskStatus(row["status"]), selected_client_id=row["selected_client_id"],
            tab_id=row["tab_id"], confirmed=bool(row["confirmed"]), error=row["error"],
            created_at=row["created_at"], updated_at=row["updated_at"], history=[row["status"]],
        )

    # -- messages (Messages-API shape: role + content) ------------------------

    def add_message(self, session_id: str, task_id: str | None, role: str, content: Any) -> None:
        self._exec(
            "INSERT INTO messages(session_id, task_id, role, content, created_at) VALUES (?,?,?,?,?)",
            (session_id, task_id, role, _dumps(content), time.time()),
        )

    def messages(self, session_id: str, task_id: str | None = None) -> list[dict[str, Any]]:
        if task_id is None:
            rows = self._exec("SELECT role, content FROM messages WHERE session_id=? ORDER BY id",
                              (session_id,)).fetchall()
        else:
            rows = self._exec("SELECT role, content FROM messages WHERE task_id=? ORDER BY id",
                              (task_id,)).fetchall()
        return [{"role": r["role"], "content": json.loads(r["content"])} for r in rows]

    def last_message_id(self, session_id: str) -> int | None:
        """The row of the session's newest message (None: it has none)."""
        row = self._exec("SELECT MAX(id) AS last FROM messages WHERE session_id=?",
                         (session_id,)).fetchone()
        return int(row["last"]) if row and row["last"] is not None else None

    def fork_session(self, source: str, target: str, through: int, mode: str) -> None:
        """A new session ``target`` holding copies of ``source``'s messages up
        to row ``through`` (a fork of the conversation: ``source`` keeps all
        of its own), with the browser it had chosen."""
        self.ensure_session(target, mode)
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.execute(
                    "INSERT INTO messages(session_id, task_id, role, content, created_at)"
                    " SELECT ?, task_id, role, content, created_at FROM messages"
                    " WHERE session_id=? AND id<=? ORDER BY id", (target, source, through))
                self._db.execute(
                    "UPDATE sessions SET selected_client_id=(SELECT selected_client_id FROM sessions"
                    " WHERE id=?) WHERE id=?", (source, target))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- actions and usage ---------------------------------------------------

    def action_started(self, action_id: str, session_id: str, task_id: str | None,
                       client_id: str, name: str, params: dict[str, Any]) -> None:
        self._exec(
            "INSERT OR REPLACE INTO actions(id, session_id, task_id, client_id, name, params, status,"
            " started_at) VALUES (?,?,?,?,?,?,?,?)",
            (action_id, session_id, task_id, client_id, name, _dumps(params), "start", time.time()),
        )

    def action_finished(self, action_id: str, status: str, result: Any = None,
                        error: str | None = None) -> None:
        self._exec("UPDATE actions SET status=?, result=?, error=?, finished_at=? WHERE id=?",
                   (status, _dumps(result) if result is not None else None, error, time.time(),
                    action_id))

    def actions(self, task_id: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM actions" + (" WHERE task_id=?" if task_id else "") + " ORDER BY started_at"
        rows = self._exec(sql, (task_id,) if task_id else ()).fetchall()
        return [dict(r) for r in rows]

    def record_usage(self, session_id: str, task_id: str | None, model: str,
                     input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        self._exec(
            "INSERT INTO usage(session_id, task_id, model, input_tokens, output_tokens, cost_usd, at)"
            " VALUES (?,?,?,?,?,?,?)",
            (session_id, task_id, model, input_tokens, output_tokens, cost_usd, time.time()),
        )

    def total_usage(self, session_id: str) -> dict[str, Any]:
        row = self._exec(
            "SELECT COALESCE(SUM(input_tokens),0) i, COALESCE(SUM(output_tokens),0) o,"
            " COALESCE(SUM(cost_usd),0) c FROM usage WHERE session_id=?", (session_id,)).fetchone()
        return {"input_tokens": row["i"], "output_tokens": row["o"], "cost_usd": row["c"]}
