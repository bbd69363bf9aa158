"""Issue 24, item 1 under stress: features subscribed to the session's hooks.

A real server (per-turn checkpoints on, the fake agent behind it) gets
features that come and go between turns, some of which fail at random in
every hook. Each turn must reach the agent with exactly the text of the
features subscribed then, in the order they subscribed; every turn ends
and the tab sees its result; the checkpoints keep recording every turn;
a browser message type goes to the feature that declared it while it is
subscribed, and gets the catalogue's refusal when none is.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from pneuma.checkpoints import Checkpoints
from pneuma.server.session_hooks import UserTurn
from pneuma.testing import serve
from tests.server.test_session_hooks import Picker
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

ROUNDS = 60
FEATURES = 8
TIME_CAP = 25.0  # seconds for the whole test


class Feature:
    """Puts ``[name]`` before each turn; fails in a hook when ``rng`` says so."""

    def __init__(self, name: str, rng: random.Random, failing: bool) -> None:
        self.name = name
        self.rng = rng
        self.failing = failing
        self.failures = 0
        self.ended = 0
        self.files = 0

    def _maybe_fail(self) -> None:
        if self.failing and self.rng.random() < 0.5:
            self.failures += 1
            raise RuntimeError(f"{self.name} fails on purpose")

    async def before_turn(self, turn: UserTurn) -> None:
        turn.prefixes.append(f"[{self.name}]")
        self._maybe_fail()

    def turn_ended(self, result: dict[str, Any]) -> None:
        self.ended += 1
        self._maybe_fail()

    def files_changed(self, files: list[dict[str, Any]]) -> None:
        self.files += 1
        self._maybe_fail()


async def test_features_come_and_go_and_fail_while_turns_go_on(tmp_path: Path) -> None:
    rng = random.Random(24)
    features = [Feature(f"f{i}", rng, failing=i % 3 == 0) for i in range(FEATURES)]
    picker = Picker()
    started = time.monotonic()
    rounds = refused = picked = 0
    async with serve("slide", tmp_path / "ws", watch=False) as server:
        session = server.pneuma.session
        tab = await server.tab()
        for n in range(ROUNDS):
            if time.monotonic() - started > TIME_CAP:
                break
            # Some features leave, some come (back): subscribed last, so last.
            for feature in rng.sample(features, 2):
                if session.hooks.get(feature.name) is None:
                    session.hooks.add(feature.name, feature)
                else:
                    session.hooks.remove(feature.name)
            expected = "".join(f"[{name}]\n\n" for name in session.hooks.names()
                               if name.startswith("f"))
            await tab.send({"type": "user_message", "content": f"turn {n}",
                            "client_msg_id": f"t{n}"})
            text = await server.agent.next_user_message()
            assert text == expected + f"turn {n}", (n, text)
            server.agent.emit({"type": "result", "data": {"subtype": "success",
                                                          "is_error": False}})
            assert (await tab.wait_for("result"))["data"]["subtype"] == "success"
            server.pneuma.files_changed([{"path": "slides/01-title.html", "content": "x"}])
            await tab.wait_for("content_update")

            with_picker = rng.random() < 0.5
            if with_picker:
                session.hooks.add("picker", picker)
            else:
                session.hooks.remove("picker")
            await tab.send({"type": "select_browser", "clientId": f"c{n}",
                            "client_msg_id": f"s{n}"})
            if with_picker:
                # The next broadcast comes after the picker ran (one socket, in order).
                await tab.send({"type": "conversation_list"})
                await tab.wait_for("conversations")
                assert picker.picked[-1] == f"c{n}"
                picked += 1
            else:
                assert (await tab.wait_for("error"))["code"] == "not_native"
                refused += 1
            rounds += 1
        await session.settle()
    recorded = len(Checkpoints.open_existing(tmp_path / "ws").checkpoints())
    failures = sum(f.failures for f in features)
    assert rounds >= 20 and recorded == rounds
    record("24.1 session hooks",
           f"{count(rounds)} turns with {FEATURES} features coming and going, "
           f"{count(failures)} hook failures raised, {count(rounds)} turns reached the agent "
           f"in order, {count(recorded)} checkpoints recorded, {picked} select_browser handled "
           f"by the subscribed feature, {refused} refused without one; 0 lost")
