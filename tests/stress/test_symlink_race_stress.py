"""Item 1 under stress: many more rounds of the symlink flip race
(tests/tools/test_symlink_race.py) through the HTTP routes, ``/content`` and
the tools; nothing outside the workspace changes or is shown."""

from __future__ import annotations

import pytest

from tests.stress.tally import count, record
from tests.tools.conftest import notes_mode, server, ws  # noqa: F401  (fixtures)
from tests.tools.test_symlink_race import arena, run_race  # noqa: F401  (arena is a fixture)

pytestmark = pytest.mark.stress

MAX_ROUNDS = 1_500
TIME_CAP = 8.0  # seconds; the old code lost within a few hundred rounds


async def test_thousands_of_requests_under_a_flipping_symlink_never_reach_outside(
        server, arena, notes_mode):  # noqa: F811
    ws, outside = arena
    result = await run_race(server, ws, outside, notes_mode, rounds=MAX_ROUNDS,
                            time_cap=TIME_CAP)
    record("1 symlink race", f"{count(result.rounds)} rounds, {count(result.requests)} HTTP "
           f"requests, {count(result.tool_calls)} direct tool calls, "
           f"{count(len(result.leaked) + int(result.outside_changed))} escapes, "
           f"{count(len(result.server_errors))} 5xx answers")
    result.assert_nothing_escaped(at_least=100)
