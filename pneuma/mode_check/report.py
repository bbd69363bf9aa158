"""What `pneuma mode check` found: one result per check, and the report of a mode.

A result is ``{check, ok, message, details}``: ``check`` a stable name
(docs/mode-authors.md, "Check a mode"), ``message`` one line a person reads,
``details`` whatever helps fix it (the failing keys, lines, actions).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome."""

    check: str
    ok: bool
    message: str
    details: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "ok": self.ok, "message": self.message, "details": self.details}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        return cls(str(data["check"]), bool(data["ok"]), str(data.get("message", "")), data.get("details"))


@dataclass
class ModeCheckReport:
    """Every check run on one mode; ``ok`` when none failed."""

    mode: str
    results: list[CheckResult] = field(default_factory=list)
    version: str | None = None

    @property
    def ok(self) -> bool:
        return all(result.ok for result in self.results)

    @property
    def failed(self) -> list[CheckResult]:
        return [result for result in self.results if not result.ok]

    def result(self, check: str) -> CheckResult | None:
        return next((r for r in self.results if r.check == check), None)

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "version": self.version, "ok": self.ok,
                "results": [result.to_dict() for result in self.results]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModeCheckReport:
        return cls(str(data["mode"]), [CheckResult.from_dict(r) for r in data.get("results", [])],
                   data.get("version"))

    def lines(self) -> list[str]:
        """One line per check, as the terminal shows them."""
        return [f"{'✓' if r.ok else '✗'} {r.check}: {r.message}" for r in self.results]
