"""What Codex says when its model API fails, told as the Claude Code
backend tells it: each retry an ``api_retry`` notice with the attempt and
the delay, the final error with the HTTP status and the server's own
message, and an endpoint that cannot be reached said in plain words.

The app-server's ``error`` notifications carry only part of it: a retry is
"Reconnecting... 1/2" with the cause in ``additionalDetails``, and a 500 is
Codex's generic "We're currently experiencing high demand…" with no status
at all. The delay and the status of each answer are in Codex's own log
lines on stderr, which the backend asks for with ``LOG_FILTER`` and hands
to ``ModelTrouble.note_stderr``. Codex does not pass on the body of a 500
anywhere, so for a 500 the status and the address are what can be told.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Any

# Added to RUST_LOG for the app-server: the retry lines (with their delay)
# and one line per HTTP answer (its status and address).
LOG_FILTER = "codex_core::responses_retry=warn,codex_http_client::client=debug"
DELAY_WAIT = 0.5  # seconds a retry notice waits for its log line (written just before)

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RETRY_IN = re.compile(r"retrying sampling request \(\d+/\d+ in ([\d.]+)(ms|s)\)")
_RETRY_DELAY = re.compile(r"waiting to retry\b.*?\bretry_delay=([\d.]+)(ms|s)\b")
_ANSWER = re.compile(r"Request completed method=\S+ url=(\S+) status=(\d{3})((?: [A-Z][\w'-]*)*)")
_UNEXPECTED = re.compile(r"unexpected status (\d{3})((?: [A-Z][\w'-]*)*): (.*?)(?:, url: (\S+))?$",
                         re.S)
_RECONNECTING = re.compile(r"Reconnecting\.\.\. (\d+)/(\d+)")
_GENERIC_500 = "internalServerError"
# Codex's own words standing where a server's message would: for a 500
# (and an overload), and for a 429 it stopped retrying.
_CODEX_WORDS = ("experiencing high demand", "exceeded retry limit")


@dataclass(frozen=True)
class HttpAnswer:
    """One answer of the model API, as Codex logged it."""

    status: int
    reason: str  # "Internal Server Error"
    url: str


@dataclass(frozen=True)
class Cause:
    """Why a request to the model failed, from an ``error`` notification."""

    status: int | None = None
    reason: str = ""
    server_message: str = ""
    url: str = ""
    unreachable: bool = False
    detail: str = ""  # Codex's own words when nothing better is known

    def said(self, endpoint: str | None) -> str:
        if self.unreachable:
            where = f" at {endpoint}" if endpoint else ""
            return f"Codex cannot reach the model API{where} ({self.detail or 'connection failed'})"
        if self.status is not None:
            text = f"The model API answered HTTP {self.status}{' ' + self.reason if self.reason else ''}"
            if self.server_message:
                text += f": {self.server_message}"
            return text + (f" ({self.url})" if self.url else "")
        return f"The model API failed: {self.detail}"


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _seconds(amount: str, unit: str) -> float:
    value = float(amount)
    return value / 1000 if unit == "ms" else value


def _delay_text(seconds: float) -> str:
    return f"{round(seconds, 1):g} s"


def _server_message(body: str) -> str:
    """The message of an OpenAI-shaped error body, else the body itself."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return body.strip()


def _status_of(info: Any) -> int | None:
    """The ``httpStatusCode`` inside a ``codexErrorInfo`` object, if any."""
    if isinstance(info, dict):
        for detail in info.values():
            if isinstance(detail, dict) and isinstance(detail.get("httpStatusCode"), int):
                return int(detail["httpStatusCode"])
    return None


class ModelTrouble:
    """The model API's failures during one Codex process, turn by turn."""

    def __init__(self) -> None:
        self._delays: deque[float] = deque()
        self._delay_seen = asyncio.Event()
        self._answer_seen = asyncio.Event()
        self.last_answer: HttpAnswer | None = None

    def new_turn(self) -> None:
        self._delays.clear()
        self._delay_seen.clear()
        self._answer_seen.clear()
        self.last_answer = None

    def note_stderr(self, line: str) -> bool:
        """Take what a Codex log line says; True when the line is one of
        ours (an HTTP answer, whose headers stay out of the page)."""
        if (match := _ANSWER.search(line)):
            self.last_answer = HttpAnswer(int(match.group(2)), match.group(3).strip(), match.group(1))
            self._answer_seen.set()
            return True
        match = _RETRY_IN.search(line) or _RETRY_DELAY.search(line)
        if match:
            self._delays.append(_seconds(match.group(1), match.group(2)))
            self._delay_seen.set()
        return False

    async def next_delay(self, wait: float = DELAY_WAIT) -> float | None:
        """The delay of the retry being announced: its log line is written
        just before the notification, but comes through another pipe."""
        if not self._delays:
            self._delay_seen.clear()
            try:
                await asyncio.wait_for(self._delay_seen.wait(), wait)
            except TimeoutError:
                return None
        return self._delays.popleft() if self._delays else None

    async def answer_logged(self, wait: float = DELAY_WAIT) -> None:
        """Wait (a little) for the log line of the answer that failed: it is
        written before the notification, but on a busy machine its pipe can
        be read after it, and without it a 400's status is not known."""
        if self.last_answer is None:
            try:
                await asyncio.wait_for(self._answer_seen.wait(), wait)
            except TimeoutError:
                pass

    def cause(self, error: dict[str, Any]) -> Cause:
        info = error.get("codexErrorInfo")
        message = str(error.get("message") or "")
        details = str(error.get("additionalDetails") or "")
        for text in (details, message):
            if (match := _UNEXPECTED.search(text)):
                return Cause(status=int(match.group(1)), reason=match.group(2).strip(),
                             server_message=_server_message(match.group(3)),
                             url=match.group(4) or "")
        status = _status_of(info)
        if details.startswith("Connection failed") or "waiting for network" in message:
            return Cause(unreachable=True, detail=details or message)
        # A retry's message is "Reconnecting... n/m": its cause is in the details.
        said = details if _RECONNECTING.search(message) else message
        server_message = "" if any(w in said for w in _CODEX_WORDS) else _server_message(said)
        answer = self.last_answer
        if answer is not None and answer.status >= 400 and status in (None, answer.status):
            # A 500's notification has no status (and Codex's generic text):
            # the log line of the answer has both the status and the address.
            return Cause(status=answer.status, reason=answer.reason, url=answer.url,
                         server_message=server_message)
        if info == _GENERIC_500:
            return Cause(status=500, reason="Internal Server Error")
        if status is not None:
            return Cause(status=status, server_message=server_message)
        return Cause(detail=_server_message(said) or message)

    def retry_notice(self, error: dict[str, Any], delay: float | None,
                     endpoint: str | None) -> str:
        cause = self.cause(error)
        when = f"in {_delay_text(delay)}" if delay is not None else "soon"
        match = _RECONNECTING.search(str(error.get("message") or ""))
        if match:
            return (f"{cause.said(endpoint)}; Codex tries again {when} "
                    f"(attempt {match.group(1)} of {match.group(2)}).")
        return f"{cause.said(endpoint)}; Codex tries again {when}, until it can or Stop is pressed."

    def final_error(self, error: dict[str, Any], endpoint: str | None) -> str:
        return f"{self.cause(error).said(endpoint)}. Codex ended the turn."
