"""Item 3 under stress: many more hypothesis-made agent lines (the
strategies of tests/test_bad_agent_lines.py) through both paths, stdio and
``/ws/cli``; each malformed one is skipped with a warning and leaves the
session as it was, and the session answers the next turn."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.stress.tally import count, record
from tests.test_bad_agent_lines import (  # noqa: F401  (socket_session is a fixture)
    StdioFeed,
    any_line,
    any_on_socket,
    any_on_stdout,
    malformed_line,
    malformed_on_socket,
    malformed_on_stdout,
    socket_session,
)

pytestmark = pytest.mark.stress

STDIO_EXAMPLES = 500
SOCKET_EXAMPLES = 150


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@pytest.fixture
def stdio(tmp_path) -> StdioFeed:
    return StdioFeed(tmp_path)


LABELS = {
    "test_malformed_lines_on_stdout_are_skipped": "stdio, malformed lines",
    "test_any_line_on_stdout_leaves_the_session_working": "stdio, arbitrary lines",
    "test_malformed_lines_on_the_agent_socket_are_skipped": "/ws/cli, malformed lines",
    "test_any_line_on_the_agent_socket_leaves_the_session_working": "/ws/cli, arbitrary lines",
}


@pytest.fixture
def tally(request):
    """Counts the lines one test fed (hypothesis runs every example under
    one fixture instance) and records them when it ends."""
    seen = {"lines": 0, "warned": 0}
    yield seen
    record("3 bad agent lines", f"{LABELS[request.node.originalname]}: "
           f"{count(seen['lines'])} fed, {count(seen['warned'])} skipped with a warning, "
           "each followed by a turn that ended normally")


@_settings(STDIO_EXAMPLES)
@given(line=malformed_line)
async def test_malformed_lines_on_stdout_are_skipped(stdio, tally, line):
    await malformed_on_stdout(stdio, line)
    tally["lines"] += 1
    tally["warned"] += 1


@_settings(STDIO_EXAMPLES)
@given(line=any_line)
async def test_any_line_on_stdout_leaves_the_session_working(stdio, tally, line):
    warned = await any_on_stdout(stdio, line)
    tally["lines"] += 1
    tally["warned"] += warned


@_settings(SOCKET_EXAMPLES)
@given(line=malformed_line)
async def test_malformed_lines_on_the_agent_socket_are_skipped(socket_session, tally,
                                                               line):  # noqa: F811
    await malformed_on_socket(socket_session, line)
    tally["lines"] += 1
    tally["warned"] += 1


@_settings(SOCKET_EXAMPLES)
@given(line=any_line)
async def test_any_line_on_the_agent_socket_leaves_the_session_working(
        socket_session, tally, line):  # noqa: F811
    warned = await any_on_socket(socket_session, line)
    tally["lines"] += 1
    tally["warned"] += warned
