"""Whatever an ACP agent sends or does, the session goes on: a warning in
the log and a clear line in the page for a bad message, the last stderr
lines for a dead agent, a restart on the next message."""

from __future__ import annotations

from typing import Any

import pytest

from tests.acp.conftest import MakeAcp

BAD_LINES = [
    ("not json {", "a line that is not JSON"),
    ("[1, 2, 3]", "a JSON list, not a JSON-RPC object"),
    ('"just a string"', "a JSON str, not a JSON-RPC object"),
    ('{"jsonrpc": "2.0", "id": [1], "result": {}}', "an id that is neither a number nor a string"),
    ('{"jsonrpc": "2.0", "method": "session/dance", "params": {}}',
     "the method 'session/dance', which Pneuma does not know"),
    ('{"jsonrpc": "2.0", "id": 5, "method": "session/frobnicate", "params": {}}',
     "the method 'session/frobnicate'"),
    ('{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "$SID", '
     '"update": {"sessionUpdate": "dance"}}}', "session/update with bad params"),
    ('{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 5}}',
     "session/update with bad params"),
    ('{"jsonrpc": "2.0", "id": 6, "method": "fs/write_text_file", "params": {"path": 1}}',
     "fs/write_text_file with bad params"),
    ('{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "other", '
     '"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", '
     '"text": "x"}}}}', "an update for the unknown session 'other'"),
    ('{"jsonrpc": "2.0", "id": 7}', None),  # an answer to nothing: ignored quietly
]


def _errors(messages: list[dict[str, Any]], code: str) -> list[str]:
    return [m["message"] for m in messages if m.get("type") == "error" and m.get("code") == code]


async def test_each_malformed_message_is_a_warning_and_the_turn_goes_on(
        make_acp: MakeAcp, caplog: pytest.LogCaptureFixture) -> None:
    steps: list[dict[str, Any]] = [{"text": "before "}]
    steps += [{"raw": line} for line, _ in BAD_LINES]
    steps += [{"raw": "x" * 5000}, {"text": "after"}]
    acp = await make_acp({"turns": {"[bad]": steps}},
                         env={"PNEUMA_ACP_LINE_LIMIT": "2048"})
    await acp.tab.say("[bad]")
    result = await acp.result()
    assert result["result"] == "before after" and not result["is_error"]
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("pneuma.agents.acp")]
    for _line, said in BAD_LINES:
        if said is not None:
            assert any(said in line for line in logged), (said, logged)
    assert any("a line longer than 2048 bytes" in line for line in logged)
    assert len([line for line in logged if line.startswith("acp: the agent sent")]) == \
        len([s for _, s in BAD_LINES if s]) + 1
    # The page shows the first few, each saying the session goes on.
    warnings = _errors(acp.tab.received, "agent_protocol")
    assert warnings[0] == ("The ACP agent sent a line that is not JSON: not json {; "
                           "Pneuma ignored it and goes on.")
    assert len(warnings) == 5
    # A request with bad params was still answered, with an error.
    await acp.tab.say("next")
    assert (await acp.result())["result"] == "echo: next"
    await acp.close()


async def test_page_warnings_are_bounded_per_turn(make_acp: MakeAcp) -> None:
    acp = await make_acp({"turns": {"[noise]": [{"raw": "nope"}] * 30 + [{"text": "ok"}]}})
    await acp.tab.say("[noise]")
    assert (await acp.result())["result"] == "ok"
    warnings = _errors(acp.tab.received, "agent_protocol")
    assert len(warnings) == 5 and "further ones of this turn only in the terminal" in warnings[-1]
    await acp.close()


async def test_a_prompt_answered_with_an_error_and_stop_reasons(make_acp: MakeAcp) -> None:
    acp = await make_acp({"turns": {"[fail]": [{"fail": "the model is on fire"}],
                                    "[long]": [{"text": "cut"}, {"stop": "max_tokens"}],
                                    "[no]": [{"stop": "refusal"}]}})
    await acp.tab.say("[fail]")
    result = await acp.result()
    assert result["is_error"] and "the model is on fire" in result["result"]
    await acp.tab.say("[long]")
    assert (await acp.result())["stop_reason"] == "max_tokens"
    await acp.tab.say("[no]")
    assert (await acp.result())["stop_reason"] == "refusal"
    stopped = _errors(acp.tab.received, "agent_stopped")
    assert stopped == ["The agent stopped: it reached its limit of output tokens.",
                       "The agent refused to go on with this request."]
    await acp.close()


async def test_an_agent_dying_mid_turn_ends_it_with_its_last_words(make_acp: MakeAcp) -> None:
    acp = await make_acp({"turns": {"[die]": [{"text": "half"}, {"crash": 3}]}})
    await acp.tab.say("[die]")
    result = await acp.result()
    assert result["is_error"]
    exited = _errors(acp.tab.received, "agent_exited")
    assert exited and "exited (status 3)" in exited[0] and "peer: exiting now" in exited[0]
    await acp.tab.say("again")  # the next message starts it again
    assert (await acp.result())["result"] == "echo: again"
    assert len(acp.received("initialize")) == 2
    await acp.close()


@pytest.mark.parametrize(("script", "timeout", "said"), [
    ({"initialize": "hang"}, "0.5", "did not answer within 0.5 s of starting"),
    ({"initialize": "crash"}, "20", "peer: cannot initialize, giving up"),
])
async def test_an_agent_that_does_not_start_is_told_each_time(
        make_acp: MakeAcp, script: dict[str, Any], timeout: str, said: str) -> None:
    acp = await make_acp(script, env={"PNEUMA_ACP_START_TIMEOUT": timeout})
    for _attempt in (1, 2):
        await acp.tab.say("hello")
        error = await acp.tab.wait_for("error", 15, where=lambda m: m["code"] == "agent_exited")
        assert said in error["message"]
    assert len(acp.received("initialize")) == 2
    await acp.close()


@pytest.mark.parametrize(("command", "said"), [
    ("/nonexistent/acp-agent --stdio", "The ACP agent `/nonexistent/acp-agent` could not be started"),
    ("  ", "No ACP agent to start"),
    ("'unbalanced", "cannot be split"),
])
async def test_no_usable_agent_command_is_one_clear_line(
        make_acp: MakeAcp, command: str, said: str) -> None:
    acp = await make_acp({}, command=command)
    await acp.tab.say("hello")
    error = await acp.tab.wait_for("error", 15, where=lambda m: m["code"] == "agent_not_found")
    assert said in error["message"]
    await acp.close()
