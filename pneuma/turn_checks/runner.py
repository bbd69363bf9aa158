"""Running a mode's checks on one turn: at most ``max_parallel`` at once per
server, each within a time budget (docs/checks.md, "How checks run").

A check runs in a worker thread of the runner's own pool, so a check that
blocks (a parser, a Node process) never holds the event loop, and the
loop never waits for one: a check past its budget is reported "timed out"
and the turn's result is out at once (its thread finishes on its own, its
answer ignored). The runner is also what the checks' benchmark calls
(``run_checks_sync``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pneuma.host.turn_checks import CheckRequest, Problem, TurnCheck

log = logging.getLogger(__name__)

MAX_PARALLEL = 2
BUDGET_S = 20.0
# The pool's threads: more than MAX_PARALLEL, so that a check that ignores
# its budget and blocks for good does not keep the next turn's checks out.
POOL_THREADS = 4
MAX_PROBLEMS = 50  # per turn: a deck of 80 overflowing slides is summed up, not listed whole

Status = Literal["passed", "failed", "error"]


@dataclass(frozen=True)
class CheckOutcome:
    """One check's answer: its problems, or why it gave none (``error``:
    it raised, timed out or could not run)."""

    check: TurnCheck
    problems: tuple[Problem, ...] = ()
    error: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check.name, "label": _label_json(self.check.label),
                "problems": len(self.problems), "error": self.error,
                "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class TurnResult:
    """The outcome of every check of one turn."""

    outcomes: tuple[CheckOutcome, ...] = field(default_factory=tuple)

    @property
    def problems(self) -> list[dict[str, Any]]:
        found = [p.to_json(o.check.name) for o in self.outcomes for p in o.problems]
        return found[:MAX_PROBLEMS]

    @property
    def problem_count(self) -> int:
        return sum(len(o.problems) for o in self.outcomes)

    @property
    def status(self) -> Status:
        if any(p.severity == "error" for o in self.outcomes for p in o.problems):
            return "failed"
        if any(o.error for o in self.outcomes):
            return "error"
        return "passed"

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "problems": self.problems,
                "problemCount": self.problem_count,
                "checks": [o.to_json() for o in self.outcomes]}


def _label_json(label: Any) -> Any:
    return dict(label) if not isinstance(label, str) else label


class CheckRunner:
    """The server's pool for turn checks."""

    def __init__(self, max_parallel: int = MAX_PARALLEL, budget_s: float = BUDGET_S) -> None:
        self.budget_s = budget_s
        self._slots = asyncio.Semaphore(max_parallel)
        self._pool = ThreadPoolExecutor(max_workers=max(POOL_THREADS, max_parallel),
                                        thread_name_prefix="turn-check")

    async def run(self, checks: Sequence[TurnCheck],
                  request_for: Callable[[TurnCheck], CheckRequest]) -> TurnResult:
        """Run ``checks`` (each with the request ``request_for`` gives it)
        and gather their outcomes, in the order of ``checks``."""
        outcomes = await asyncio.gather(*(self._one(c, request_for) for c in checks))
        return TurnResult(tuple(outcomes))

    async def _one(self, check: TurnCheck,
                   request_for: Callable[[TurnCheck], CheckRequest]) -> CheckOutcome:
        async with self._slots:
            started = time.monotonic()
            try:
                request = replace(request_for(check), budget_s=self.budget_s)
                future = asyncio.get_running_loop().run_in_executor(
                    self._pool, _run_check, check, request)
                problems = await asyncio.wait_for(future, self.budget_s)
            except TimeoutError:
                return CheckOutcome(check, error=f"timed out after {self.budget_s:g} s",
                                    seconds=time.monotonic() - started)
            except Exception as exc:  # a check's failure is its outcome, never the session's
                log.warning("the turn check %s/%s failed: %s", check.mode, check.name, exc)
                return CheckOutcome(check, error=_one_line(exc),
                                    seconds=time.monotonic() - started)
            return CheckOutcome(check, problems=problems, seconds=time.monotonic() - started)

    def close(self) -> None:
        """Stop taking work; a check still running finishes in its thread."""
        self._pool.shutdown(wait=False, cancel_futures=True)


def _run_check(check: TurnCheck, request: CheckRequest) -> tuple[Problem, ...]:
    problems = tuple(check.run(request) or ())
    for problem in problems:
        if not isinstance(problem, Problem):
            raise TypeError(f"returned {type(problem).__name__}, not a Problem")
    return problems


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def run_checks_sync(checks: Sequence[TurnCheck], request: CheckRequest,
                    budget_s: float = BUDGET_S) -> TurnResult:
    """Run ``checks`` on ``request`` outside a server (the checks'
    benchmark, tests): the same pool rules, in a loop of its own."""

    async def run() -> TurnResult:
        runner = CheckRunner(budget_s=budget_s)
        try:
            return await runner.run(checks, lambda check: replace(request, mode=check.mode))
        finally:
            runner.close()

    return asyncio.run(run())
