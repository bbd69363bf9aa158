"""``ActionScheduler``: browser actions, one at a time per session, each observed.

``run()`` sends a ``browser_action`` to the session's client and waits for
its ``ack`` (``ack_timeout``) and then its ``browser_action_result``
(``action_timeout``). Actions of one session queue behind each other (a
FIFO lock); every action ends in exactly one of: success, an error the
client reported, a timeout, or "the client went offline". Each step is
recorded in the store and reported as a lifecycle event (start, success,
error).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .clients import ExtensionRegistry
from .store import SessionStore


class ActionError(RuntimeError):
    """The client answered with an error (recoverable: the model hears about it)."""

    code = "action_failed"

    def __init__(self, message: str, code: str | None = None, details: Any = None):
        super().__init__(message)
        if code:
            self.code = code
        self.details = details


class ActionUnobservable(ActionError):
    """No ack, no result, no client: the task cannot go on (→ error)."""


class ActionTimeout(ActionUnobservable):
    code = "action_timeout"


class ClientOffline(ActionUnobservable):
    code = "client_offline"


@dataclass
class ActionRecord:
    id: str
    session_id: str
    task_id: str | None
    client_id: str
    name: str
    params: dict[str, Any]
    status: str = "queued"
    result: Any = None
    error: dict[str, Any] | None = None
    started_at: float = 0.0
    finished_at: float | None = None
    ack: asyncio.Future[None] = field(default=None, repr=False)  # type: ignore[assignment]
    done: asyncio.Future[Any] = field(default=None, repr=False)  # type: ignore[assignment]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "sessionId": self.session_id, "taskId": self.task_id,
            "clientId": self.client_id, "name": self.name, "params": self.params,
            "status": self.status, "result": self.result, "error": self.error,
            "startedAt": self.started_at, "finishedAt": self.finished_at,
        }


class ActionScheduler:
    def __init__(
        self,
        registry: ExtensionRegistry,
        store: SessionStore | None = None,
        on_event: Callable[[str, ActionRecord], None] | None = None,
        *,
        ack_timeout: float = 10.0,
        action_timeout: float = 60.0,
    ) -> None:
        self.registry = registry
        self.store = store
        self.on_event = on_event
        self.ack_timeout = ack_timeout
        self.action_timeout = action_timeout
        self._locks: dict[str, asyncio.Lock] = {}
        self.pending: dict[str, ActionRecord] = {}
        self.log: list[tuple[str, str, str]] = []  # (phase, action name, action id)

    def busy(self, session_id: str) -> bool:
        lock = self._locks.get(session_id)
        return bool(lock and lock.locked())

    async def run(self, session_id: str, client_id: str, name: str, params: dict[str, Any],
                  *, task_id: str | None = None, ack_timeout: float | None = None,
                  timeout: float | None = None) -> Any:
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        async with lock:
            return await self._run(session_id, client_id, name, params, task_id,
                                   self.ack_timeout if ack_timeout is None else ack_timeout,
                                   self.action_timeout if timeout is None else timeout)

    async def _run(self, session_id: str, client_id: str, name: str, params: dict[str, Any],
                   task_id: str | None, ack_timeout: float, timeout: float) -> Any:
        loop = asyncio.get_running_loop()
        record = ActionRecord(
            id="act_" + uuid.uuid4().hex[:16], session_id=session_id, task_id=task_id,
            client_id=client_id, name=name, params=dict(params),
            ack=loop.create_future(), done=loop.create_future(),
        )
        record.started_at = time.time()
        record.status = "start"
        self.pending[record.id] = record
        if self.store is not None:
            self.store.action_started(record.id, session_id, task_id, client_id, name, record.params)
        self._event("start", record)
        try:
            message = {"type": "browser_action", "id": record.id, "actionId": record.id,
                       "action": name, "sessionId": session_id, "clientId": client_id,
                       "params": record.params}
            if not self.registry.is_online(client_id) or not await self.registry.send(client_id, message):
                raise ClientOffline(f"the browser client {client_id} is offline")
            try:
                await asyncio.wait_for(asyncio.shield(record.ack), ack_timeout)
            except asyncio.TimeoutError:
                raise ActionTimeout(
                    f"the browser client did not acknowledge {name} within {ack_timeout:g} s",
                    "ack_timeout") from None
            try:
                result = await asyncio.wait_for(asyncio.shield(record.done), timeout)
            except asyncio.TimeoutError:
                raise ActionTimeout(f"{name} did not finish within {timeout:g} s") from None
        except ActionError as exc:
            self._finish(record, "error", error={"code": exc.code, "message": str(exc)})
            raise
        except asyncio.CancelledError:
            self._finish(record, "error", error={"code": "cancelled", "message": "cancelled"})
            raise
        finally:
            self.pending.pop(record.id, None)
        self._finish(record, "success", result=result)
        return result

    def _finish(self, record: ActionRecord, status: str, result: Any = None,
                error: dict[str, Any] | None = None) -> None:
        record.status = status
        record.result = result
        record.error = error
        record.finished_at = time.time()
        if self.store is not None:
            self.store.action_finished(record.id, status, result,
                                       error["message"] if error else None)
        self._event(status, record)

    def _event(self, phase: str, record: ActionRecord) -> None:
        self.log.append((phase, record.name, record.id))
        if self.on_event is not None:
            self.on_event(phase, record)

    # -- what clients report -------------------------------------------------

    def acknowledged(self, action_id: str) -> None:
        record = self.pending.get(action_id)
        if record is not None and not record.ack.done():
            record.ack.set_result(None)

    def finished(self, action_id: str, ok: bool, result: Any = None,
                 error: dict[str, Any] | str | None = None) -> None:
        record = self.pending.get(action_id)
        if record is None:
            return
        if not record.ack.done():
            record.ack.set_result(None)
        if record.done.done():
            return
        if ok:
            record.done.set_result(result if result is not None else {})
        else:
            if isinstance(error, dict):
                exc = ActionError(str(error.get("message") or "the action failed"),
                                  str(error.get("code") or "action_failed"), error.get("details"))
            else:
                exc = ActionError(str(error or "the action failed"))
            record.done.set_exception(exc)

    def client_offline(self, client_id: str) -> None:
        """Fail at once every action waiting on a client that disconnected."""
        for record in list(self.pending.values()):
            if record.client_id != client_id:
                continue
            exc = ClientOffline(f"the browser client {client_id} went offline during {record.name}")
            for future in (record.ack, record.done):
                if not future.done():
                    future.set_exception(exc)
                    future.exception()  # mark retrieved; the waiter re-raises it
