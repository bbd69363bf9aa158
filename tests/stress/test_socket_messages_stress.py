"""Issue 24, item 4 under stress: the browser socket against its catalogue.

One tab of a real server (the fake agent behind it) sends, for every type
the catalogue accepts, a well-formed message and malformed ones (a field
left out, a field of the wrong kind, a string over its limit, the type
misspelled), plus JSON that is no message at all. Each malformed one is
answered to that tab alone with ``error {code: "bad_message"}`` and the
socket stays open; every message the tab receives, answer or broadcast,
is a type the catalogue declares, with every key its declaration requires.
"""

from __future__ import annotations

import json
import random
import time
import typing
from typing import Any

import pytest

from pneuma.core import messages as catalogue
from pneuma.testing import serve
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

ROUNDS = 40
TIME_CAP = 25.0  # seconds for the whole test
# A well-formed example of every type a tab may send, harmless to repeat:
# ids that name nothing pending, a conversation that does not exist.
VALID: dict[str, dict[str, Any]] = {
    "user_message": {"content": "hello", "client_msg_id": "c-{n}"},
    "permission_response": {"request_id": "nothing-pending", "behavior": "deny",
                            "client_msg_id": "p-{n}"},
    "interrupt": {"client_msg_id": "i-{n}"},
    "set_model": {"model": "a-model", "client_msg_id": "m-{n}"},
    "session_subscribe": {"last_seq": 0},
    "session_ack": {"last_seq": 1},
    "history_page": {"before": 1},
    "history_message": {"row": 1},
    "viewer_action_response": {"request_id": "nothing-pending", "result": {"success": True}},
    "confirmation_response": {"request_id": "nothing-pending", "approved": False},
    "select_browser": {"clientId": "nobody", "client_msg_id": "s-{n}"},
    "conversation_list": {},
    "conversation_new": {},
    "conversation_switch": {"conversation_id": "no-such-conversation"},
    "conversation_rename": {"conversation_id": "no-such-conversation", "title": "t"},
    "conversation_delete": {"conversation_id": "no-such-conversation"},
    "queued_message_cancel": {"queue_id": "nothing-queued", "client_msg_id": "qc-{n}"},
    "queued_message_edit": {"queue_id": "nothing-queued", "content": "t", "client_msg_id": "qe-{n}"},
    "queued_message_send": {"queue_id": "nothing-queued"},
}
NOT_MESSAGES = ["[]", "42", '"text"', "null", "{", '{"type": 7}', "{}"]


def _valid(kind: str, n: int) -> dict[str, Any]:
    fields = {k: v.replace("{n}", str(n)) if isinstance(v, str) else v
              for k, v in VALID[kind].items()}
    return {"type": kind, **fields}


def _malformed(kind: str, n: int, rng: random.Random) -> list[str]:
    """Broken copies of a valid message: each field left out or of the wrong
    kind in turn, one string far over any limit, the type misspelled."""
    model = next(m for m in catalogue.BROWSER_MESSAGE_MODELS if catalogue._literal_type(m) == kind)
    required = [name for name, f in model.model_fields.items() if f.is_required() and name != "type"]
    good = _valid(kind, n)
    broken = []
    for name in required:
        broken.append({k: v for k, v in good.items() if k != name})
        broken.append({**good, name: rng.choice([[1, 2], {"a": None}, -1.5])})
    if "content" in good:
        broken.append({**good, "content": "x" * 1_000_001})
    broken.append({**good, "type": kind.upper()})
    return [json.dumps(b) for b in broken]


def _check(message: dict[str, Any]) -> None:
    declared = catalogue.SERVER_MESSAGES.get(message.get("type", ""))
    assert declared is not None, f"a message the catalogue lacks: {message}"
    missing = set(typing.cast(Any, declared).__required_keys__) - set(message)
    assert not missing, f"{message['type']} without {sorted(missing)}: {message}"


async def test_every_kind_of_bad_message_is_one_error_and_every_reply_is_catalogued(tmp_path):
    rng = random.Random(24)
    tried = {"valid": 0, "malformed": 0, "errors": 0, "received": 0}
    started = time.monotonic()
    async with serve("doc", tmp_path / "ws") as server:
        tab = await server.tab()
        for n in range(ROUNDS):
            if time.monotonic() - started > TIME_CAP:
                break
            for kind in catalogue.BROWSER_MESSAGE_TYPES:
                await tab.send(_valid(kind, n))
                tried["valid"] += 1
                for text in _malformed(kind, n, rng) + ([rng.choice(NOT_MESSAGES)]):
                    await tab.send_raw(text)
                    tried["malformed"] += 1
                    answer = await tab.wait_until(
                        lambda m: m.get("type") == "error" and m.get("code") == "bad_message",
                        what=f"bad_message for {text[:80]}")
                    assert "seq" not in answer, answer  # for that tab only
                    tried["errors"] += 1
            assert not tab.ws.closed
        # Everything sent has been handled once this round trip is answered.
        await tab.send({"type": "session_subscribe", "last_seq": 0})
        await tab.wait_for("message_history")
        for message in tab.received:
            _check(message)
        tried["received"] = len(tab.received)
    assert tried["errors"] == tried["malformed"]
    record("24.4 socket messages",
           f"{count(tried['valid'])} well-formed and {count(tried['malformed'])} malformed "
           f"messages over {len(catalogue.BROWSER_MESSAGE_TYPES)} types; "
           f"{count(tried['errors'])} bad_message answers, socket open throughout; "
           f"{count(tried['received'])} received, 0 outside the catalogue")
