"""The one error model (docs/design/tool-contract.md, "Error model"), for tools and HTTP alike.

Every failure a tool, an HTTP route or the MCP server reports is a
``ToolError`` carrying exactly one of the contract's codes (plus three of the
host's own for HTTP: ``E_UNAUTHORIZED``, ``E_FORBIDDEN``, ``E_UNAVAILABLE``);
the HTTP status is derived from the code (``HTTP_STATUS``). docs/errors.md
describes the shape and when each code is used.
"""

from __future__ import annotations

from typing import Any, Literal

ErrorCode = Literal[
    "E_DENY_PATH",
    "E_NOT_FOUND",
    "E_IO",
    "E_TOO_LARGE",
    "E_ENCODING",
    "E_PARSE_FAIL",
    "E_LINT_FAIL",
    "E_CONFLICT",
    "E_PREVIEW_FAIL",
    "E_TIMEOUT",
    "E_POLICY_VIOLATION",
    "E_TOOL_DISABLED",
    "E_UNSUPPORTED",
    "E_BAD_ARGS",
    "E_INTERNAL",
    # The host's own, for HTTP: who may ask, and what is not running.
    "E_UNAUTHORIZED",
    "E_FORBIDDEN",
    "E_UNAVAILABLE",
    # Installing and checking modes (pneuma.mode_sources, pneuma.mode_check).
    "E_BUSY",
    "E_INSTALL_FAILED",
    "E_CHECK_FAILED",
]

ERROR_CODES: frozenset[str] = frozenset(ErrorCode.__args__)  # type: ignore[attr-defined]

# How an error code reads as an HTTP status, for the server's routes.
HTTP_STATUS: dict[str, int] = {
    "E_DENY_PATH": 403,
    "E_NOT_FOUND": 404,
    "E_IO": 500,
    "E_TOO_LARGE": 413,
    "E_ENCODING": 415,
    "E_PARSE_FAIL": 422,
    "E_LINT_FAIL": 422,
    "E_CONFLICT": 409,
    "E_PREVIEW_FAIL": 502,
    "E_TIMEOUT": 504,
    "E_POLICY_VIOLATION": 403,
    "E_TOOL_DISABLED": 403,
    "E_UNSUPPORTED": 400,
    "E_BAD_ARGS": 400,
    "E_INTERNAL": 500,
    "E_UNAUTHORIZED": 401,
    "E_FORBIDDEN": 403,
    "E_UNAVAILABLE": 503,
    "E_BUSY": 409,
    "E_INSTALL_FAILED": 422,
    "E_CHECK_FAILED": 422,
}

_NOT_RECOVERABLE = {"E_INTERNAL", "E_UNSUPPORTED", "E_TOOL_DISABLED"}


class ToolError(Exception):
    """A failure in the contract's shape: code, message, details, hint, recoverable."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        hint: str | None = None,
        recoverable: bool | None = None,
    ):
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
        self.hint = hint
        self.recoverable = code not in _NOT_RECOVERABLE if recoverable is None else recoverable

    @property
    def http_status(self) -> int:
        return HTTP_STATUS[self.code]

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "details": self.details,
            "recoverable": self.recoverable,
        }
        if self.hint:
            error["hint"] = self.hint
        return {"error": error}

    def __repr__(self) -> str:
        return f"ToolError({self.code}, {self.message!r})"


class CodedError(RuntimeError):
    """A failure said in one line with the error code the browser gets and
    a hint (``E_CONFLICT`` unless told otherwise): what an exporter or a
    publisher raises (pneuma.host.exporters, pneuma.host.publishers)."""

    def __init__(self, message: str, *, code: ErrorCode = "E_CONFLICT",
                 hint: str | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code: ErrorCode = code
        self.hint = hint
