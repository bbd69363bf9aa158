"""The task state machine (docs/design/native-runtime.md, "Task state machine").

A task is one piece of work the person asked for: a chat turn, or a browser
task (select a client, confirm, prepare the page, let the model act). Its
status only moves along ``TRANSITIONS``; anything else is a bug and raises.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class TaskStatus(str, Enum):
    CREATED = "created"
    RUNNING = "running"
    WAITING_FOR_BROWSER_SELECTION = "waiting_for_browser_selection"
    WAITING_FOR_USER_CONFIRMATION = "waiting_for_user_confirmation"
    ONGOING = "ongoing"  # a key step is done; waiting for the person's next message
    COMPLETED = "completed"
    ERROR = "error"  # unrecoverable: a timeout, an offline client, a failed start


S = TaskStatus
_WAITING = {S.WAITING_FOR_BROWSER_SELECTION, S.WAITING_FOR_USER_CONFIRMATION}

TRANSITIONS: dict[TaskStatus, set[TaskStatus]] = {
    S.CREATED: {S.RUNNING, *_WAITING, S.ONGOING, S.ERROR},
    S.RUNNING: {*_WAITING, S.ONGOING, S.COMPLETED, S.ERROR},
    S.WAITING_FOR_BROWSER_SELECTION: {S.WAITING_FOR_USER_CONFIRMATION, S.RUNNING, S.ONGOING,
                                      S.ERROR},
    S.WAITING_FOR_USER_CONFIRMATION: {S.RUNNING, S.ONGOING, S.ERROR},
    # A finished task continues when the person writes again.
    S.ONGOING: {S.RUNNING, *_WAITING, S.COMPLETED, S.ERROR},
    S.COMPLETED: {S.RUNNING, *_WAITING, S.ERROR},
    S.ERROR: {S.RUNNING, *_WAITING},
}

FINAL = {S.COMPLETED, S.ERROR, S.ONGOING}


class InvalidTransition(RuntimeError):
    pass


def new_task_id() -> str:
    return "task_" + uuid.uuid4().hex[:16]


@dataclass
class Task:
    id: str
    session_id: str
    title: str = ""
    status: TaskStatus = TaskStatus.CREATED
    selected_client_id: str | None = None
    tab_id: int | None = None  # the session tab the client opened for this task
    confirmed: bool = False  # the person said yes to browser actions for this task
    error: str | None = None
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    history: list[str] = field(default_factory=lambda: ["created"])  # statuses it went through

    def move(self, status: TaskStatus, *, error: str | None = None) -> None:
        status = TaskStatus(status)
        if status == self.status:
            return
        if status not in TRANSITIONS[self.status]:
            raise InvalidTransition(f"task {self.id}: {self.status.value} -> {status.value}")
        self.status = status
        self.error = error if status == S.ERROR else None
        self.updated_at = time.time()
        self.history.append(status.value)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        return {
            "id": data["id"],
            "sessionId": data["session_id"],
            "title": data["title"],
            "status": data["status"],
            "selectedClientId": data["selected_client_id"],
            "tabId": data["tab_id"],
            "confirmed": data["confirmed"],
            "error": data["error"],
            "createdAt": data["created_at"],
            "updatedAt": data["updated_at"],
        }
