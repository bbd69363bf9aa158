"""One JSON request to a Pneuma server from outside it (a tool run by
``pneuma mcp`` or ``pneuma tool`` asking the running server to show a
confirmation, jump a preview, …), with the standard library only: these
processes must start fast and need no event loop."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from typing import Any

log = logging.getLogger(__name__)


def request_json(base_url: str, method: str, path: str, *, token: str | None = None,
                 body: Any = None, timeout: float = 10.0) -> tuple[int, Any]:
    """``(status, decoded JSON answer)`` of ``method base_url+path``; the
    answer is None when it is not JSON, and ``(0, None)`` when nothing
    answers (refused, timed out, not HTTP). Error statuses are returned,
    not raised: the server's ``{"error": {...}}`` is in the answer."""
    url = base_url.rstrip("/") + path
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body, ensure_ascii=False).encode("utf-8") if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, _decoded(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, _decoded(exc.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        log.debug("%s %s failed: %s", method, url, exc)
        return 0, None


def _decoded(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return None
