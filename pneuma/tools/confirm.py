"""Write confirmations: a dry run's diff shown to the person with Apply/Reject.

When ``write_to_file``'s dry run succeeds and a Pneuma page is connected to
the running server, the server shows a ``confirmation_request`` of kind
``write`` with details ``{path, diff, newHash}`` (the diff in the contract's
line-hunk JSON). The dry run does not wait: it answers its diff as always,
plus ``confirmationId``. The real write of that content (``dryRun: false``)
then waits, at most ``confirmTimeoutMs`` (default 300 s), for the person:

* approved → the write goes ahead;
* rejected (or replaced by a newer dry run of the same file) →
  ``E_POLICY_VIOLATION`` "the person rejected this change";
* no decision in time → ``E_TIMEOUT`` (the dialog stays open; call again);
* no page connected, no server, the server gone or restarted → exactly the
  behaviour without confirmations (``writeRequiresDiff`` alone).

Two sides:

``ConfirmationRegistry``
    lives in the server (``pneuma/server/routes_tools.py``), on top of the
    session's ``ConfirmationChannel``; remembers every request and its
    answer by id, so the write can ask for it later. HTTP: ``POST
    /api/confirmations`` and ``GET /api/confirmations/{id}?wait=S``.

``offer_write`` / ``check_write``
    what a handler calls. Inside the server they use the registry directly
    (``ctx.interact.confirmations``); from ``pneuma mcp`` / ``pneuma tool``
    they talk HTTP to ``ctx.server_url`` with ``ctx.server_token`` (the
    agent's ``PNEUMA_API`` / ``PNEUMA_TOKEN``).

The policy ``confirmWrites: false`` turns the whole thing off.
"""

from __future__ import annotations

import asyncio
import logging
import time
import urllib.parse
import uuid
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.tools.context import ToolContext
from pneuma.tools.server_client import request_json

log = logging.getLogger("pneuma.tools.confirm")

DEFAULT_CONFIRM_TIMEOUT = 300.0  # seconds a real write waits for the decision
DIALOG_LIFETIME = 3600.0  # seconds a dialog stays open without an answer
HTTP_TIMEOUT = 5.0  # seconds for opening a confirmation over HTTP
POLL_CHUNK = 60.0  # longest single GET …?wait= (the route caps at 600)
MAX_RECORDS = 500

# pending → approved | rejected | superseded | timeout | no_browser
FINAL_REFUSALS = ("rejected", "superseded")


def diff_counts(diff: Any) -> tuple[int, int]:
    """(removed, added) line counts of a line diff."""
    removed = added = 0
    if isinstance(diff, dict):
        for hunk in diff.get("hunks") or []:
            if isinstance(hunk, dict):
                removed += len(hunk.get("linesOld") or [])
                added += len(hunk.get("linesNew") or [])
    return removed, added


def write_summary(path: str, diff: Any) -> str:
    removed, added = diff_counts(diff)
    return f"The agent wants to write {path} (+{added} −{removed} lines)."


def write_key(path: str, new_hash: str | None) -> str:
    return f"write:{path}:{new_hash or ''}"


# --- the server side ---------------------------------------------------------------


class ConfirmationRegistry:
    """Requests shown through a session's ``ConfirmationChannel``, kept by id
    with their answers. Must be used on the server's event loop, except the
    ``*_threadsafe`` methods, which a handler running in a worker thread calls."""

    def __init__(self, session: Any, *, lifetime: float = DIALOG_LIFETIME):
        self.session = session
        self.lifetime = lifetime
        self.requests: dict[str, dict[str, Any]] = {}
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def channel(self) -> Any:
        return self.session.confirmations

    def connected(self) -> bool:
        counter = getattr(self.channel, "_connected", None)
        try:
            return bool(counter()) if callable(counter) else True
        except Exception:  # pragma: no cover - a broken session counts as none
            return False

    def start(self, kind: str, summary: str, details: dict[str, Any], *,
              key: str | None = None) -> dict[str, Any] | None:
        """Open the dialog without waiting; the request's public record, or
        None when no page is connected. A pending request with the same
        ``key`` is reused; for kind ``write`` a pending one of the same path
        with other content is superseded (closed as refused)."""
        self.loop = asyncio.get_running_loop()
        if not self.connected():
            return None
        if key is not None:
            for record in self.requests.values():
                if record["key"] == key and record["status"] == "pending":
                    return public_record(record)
        if kind == "write" and isinstance(details.get("path"), str):
            for record in list(self.requests.values()):
                if (record["kind"] == "write" and record["status"] == "pending"
                        and record["path"] == details["path"] and record["key"] != key):
                    self._close(record, "superseded", "replaced by a newer dry run")
        confirmation_id = f"cw_{uuid.uuid4().hex[:16]}"
        record: dict[str, Any] = {
            "id": confirmation_id, "kind": kind, "key": key, "path": details.get("path"),
            "newHash": details.get("newHash"), "status": "pending", "message": None,
            "createdAt": time.time(), "decidedAt": None,
        }
        details = {**details, "confirmationId": confirmation_id}
        record["task"] = asyncio.get_running_loop().create_task(
            self._ask(record, kind, summary, details))
        self.requests[confirmation_id] = record
        self._prune()
        return public_record(record)

    async def _ask(self, record: dict[str, Any], kind: str, summary: str,
                   details: dict[str, Any]) -> None:
        from pneuma.core.channels import BrowserRequestTimeout, NoBrowserConnected

        try:
            approved, message = await self.channel.request(kind, summary, details,
                                                           timeout=self.lifetime)
        except NoBrowserConnected as exc:
            outcome = ("no_browser", str(exc))
        except BrowserRequestTimeout as exc:
            outcome = ("timeout", str(exc))
        else:
            outcome = ("approved" if approved else "rejected", message)
        if record["status"] == "pending":  # not superseded meanwhile
            record.update(status=outcome[0], message=outcome[1], decidedAt=time.time())

    def _close(self, record: dict[str, Any], status: str, message: str) -> None:
        record.update(status=status, message=message, decidedAt=time.time())
        for request_id, request in list(self.channel.open_requests.items()):
            if (request.get("details") or {}).get("confirmationId") == record["id"]:
                self.channel.resolve(request_id, (False, message))

    def _prune(self) -> None:
        while len(self.requests) > MAX_RECORDS:
            oldest = next((k for k, r in self.requests.items() if r["status"] != "pending"),
                          None)
            if oldest is None:
                break
            self.requests.pop(oldest)

    def get(self, confirmation_id: str) -> dict[str, Any] | None:
        record = self.requests.get(confirmation_id)
        return public_record(record) if record else None

    async def wait(self, confirmation_id: str, timeout: float) -> dict[str, Any] | None:
        """The record once decided, or still pending after ``timeout`` s; None if unknown."""
        record = self.requests.get(confirmation_id)
        if record is None:
            return None
        if record["status"] == "pending" and timeout > 0:
            try:
                await asyncio.wait_for(asyncio.shield(record["task"]), timeout)
            except asyncio.TimeoutError:
                pass
        return public_record(record)

    # -- from a worker thread --

    def _in_loop_thread(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def start_threadsafe(self, kind: str, summary: str, details: dict[str, Any], *,
                         key: str | None = None) -> dict[str, Any] | None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return None
        if self._in_loop_thread():
            return self.start(kind, summary, details, key=key)

        async def start() -> dict[str, Any] | None:
            return self.start(kind, summary, details, key=key)

        return asyncio.run_coroutine_threadsafe(start(), loop).result(HTTP_TIMEOUT)

    def wait_threadsafe(self, confirmation_id: str, timeout: float) -> dict[str, Any] | None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return None
        if self._in_loop_thread():  # cannot block the loop: answer what is known
            return self.get(confirmation_id)
        future = asyncio.run_coroutine_threadsafe(self.wait(confirmation_id, timeout), loop)
        return future.result(timeout + HTTP_TIMEOUT)


def public_record(record: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in record.items() if k != "task"}
    out["approved"] = record["status"] == "approved"
    return out


# --- what handlers call ----------------------------------------------------------------


def _registry(ctx: ToolContext) -> ConfirmationRegistry | None:
    registry = getattr(ctx.interact, "confirmations", None)
    return registry if isinstance(registry, ConfirmationRegistry) else None


def _http(ctx: ToolContext, method: str, path: str, body: dict[str, Any] | None,
          timeout: float) -> tuple[int, dict[str, Any] | None]:
    """(status, JSON body) of a request to the server; (0, None) when it cannot be reached."""
    status, answer = request_json(str(ctx.server_url), method, path, token=ctx.server_token,
                                  body=body, timeout=timeout)
    return status, answer if isinstance(answer, dict) or answer is None else None


def confirm_timeout(ctx: ToolContext) -> float:
    try:
        return max(0.0, float(ctx.policies.get("confirmTimeoutMs", DEFAULT_CONFIRM_TIMEOUT * 1000))
                   / 1000.0)
    except (TypeError, ValueError):
        return DEFAULT_CONFIRM_TIMEOUT


def offer_write(ctx: ToolContext, path: str, diff: dict[str, Any], new_hash: str) -> str | None:
    """Show a dry run's diff to the person, without waiting; the confirmation
    id, or None when nobody can be asked (no page, no server, turned off,
    nothing changes)."""
    if ctx.policies.get("confirmWrites", True) is False or not diff.get("hunks"):
        return None
    summary = write_summary(path, diff)
    details = {"path": path, "diff": diff, "newHash": new_hash}
    key = write_key(path, new_hash)
    registry = _registry(ctx)
    if registry is not None:
        try:
            record = registry.start_threadsafe("write", summary, details, key=key)
        except Exception:  # the dialog is a courtesy: never fail the dry run for it
            log.warning("cannot open the write confirmation", exc_info=True)
            return None
        return record["id"] if record else None
    if not ctx.server_url:
        return None
    status, body = _http(ctx, "POST", "/api/confirmations",
                         {"kind": "write", "summary": summary, "details": details, "key": key},
                         HTTP_TIMEOUT)
    if status == 200 and isinstance(body, dict) and isinstance(body.get("id"), str):
        return body["id"]
    return None


def wait_decision(ctx: ToolContext, confirmation_id: str, timeout: float) -> dict[str, Any] | None:
    """The confirmation's record once decided or after ``timeout`` s; None
    when it cannot be known (no server, server gone or restarted)."""
    registry = _registry(ctx)
    if registry is not None:
        return registry.wait_threadsafe(confirmation_id, timeout)
    if not ctx.server_url:
        return None
    deadline = time.monotonic() + timeout
    quoted = urllib.parse.quote(confirmation_id, safe="")
    while True:
        chunk = max(0.0, min(POLL_CHUNK, deadline - time.monotonic()))
        status, body = _http(ctx, "GET", f"/api/confirmations/{quoted}?wait={chunk:.3f}", None,
                             chunk + HTTP_TIMEOUT * 2)
        if status != 200 or not isinstance(body, dict):
            return None
        if body.get("status") != "pending" or time.monotonic() >= deadline:
            return body


def check_write(ctx: ToolContext, path: str, record: dict[str, Any] | None) -> None:
    """Before a real write: wait for the person's decision on the dry run
    ``record`` showed, if it was shown. Raises E_POLICY_VIOLATION when they
    rejected it, E_TIMEOUT when they have not decided in time."""
    confirmation_id = (record or {}).get("confirmationId")
    if not confirmation_id or ctx.policies.get("confirmWrites", True) is False:
        return
    timeout = confirm_timeout(ctx)
    decision = wait_decision(ctx, confirmation_id, timeout)
    if decision is None:
        return  # nobody to ask any more: as without confirmations
    status = decision.get("status")
    if status == "approved" or status == "no_browser":
        return
    if status in FINAL_REFUSALS:
        raise ToolError(
            "E_POLICY_VIOLATION", f"the person rejected this change to {path}"
            + (" (a newer dry run replaced it)" if status == "superseded" else ""),
            details={"path": path, "confirmationId": confirmation_id, "decision": status,
                     **({"message": decision["message"]} if decision.get("message") else {})},
            hint="Do not write it. Ask the person what they want instead, or make another "
                 "dry run with different content.")
    still_open = status == "pending"
    raise ToolError(
        "E_TIMEOUT", f"the person has not approved the change to {path} within "
        f"{timeout:g} s",
        details={"path": path, "confirmationId": confirmation_id, "decision": status},
        hint="The Apply/Reject dialog is still open in the Pneuma page: tell the person, "
             "then call the same write again to keep waiting." if still_open else
             "The dialog was closed unanswered: make the dry run again to ask again.")
