"""Claude Code's part of rewinding the conversation (docs/conversations.md,
"Branches"), with the fake CLI (tests/fakes/fake_claude.py): where the
CLI's conversation stands after a turn (its session and its last message's
uuid), and the command a fork starts the next CLI with. The real CLI's
part is tests/browser/test_edit_and_resend.py."""

from __future__ import annotations

from pneuma.core.backend import AgentPoint, conversation_point, fork_at
from tests.test_claude_code_backend import (  # noqa: F401 (fixtures)
    cleanup,
    fake,
    make_backend,
    started,
)


async def test_a_fork_resumes_the_session_cut_at_the_point_as_a_new_session(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    assert conversation_point(backend) is None  # nothing said yet
    await backend.send_user_message("hello", [])
    await sink.wait_type("result")
    point = conversation_point(backend)
    assert point is not None and point.backend == "claude-code"
    assert point.agent_session_id == backend.agent_session_id
    assert len(point.at) == 36  # the uuid of the CLI's last assistant line

    assert await fork_at(backend, point)
    assert conversation_point(backend) == point  # until the forked CLI says more
    await backend.send_user_message("again, differently", [])
    await sink.wait_type("result", count=2)
    argv = fake.starts()[-1]["argv"]
    assert argv[argv.index("--resume") + 1] == point.agent_session_id
    assert argv[argv.index("--resume-session-at") + 1] == point.at
    assert "--fork-session" in argv
    # A point of another backend's is not this one's to fork.
    assert not await fork_at(backend, AgentPoint("codex", "thread", "turn"))
