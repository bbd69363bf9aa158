"""The browser socket's messages are all declared in one catalogue,
``pneuma.core.messages`` (issue 24, item 4): what the server sends, what
it accepts and handles, what the page sends, and docs/protocol.md's two
tables all name the same types. The source is read with ``ast``
(tests/message_scan.py), so these hold wherever the code moves."""

from __future__ import annotations

import json
import textwrap
import typing
from pathlib import Path

import pytest

from pneuma.core import messages as catalogue
from pneuma.testing import serve
from tests.message_scan import (
    ROOT,
    browser_sent_types,
    handled_types,
    protocol_table_types,
    sent_types,
)

PROTOCOL = ROOT / "docs" / "protocol.md"
MODEL_TYPES = {m.__name__: catalogue._literal_type(m) for m in catalogue.BROWSER_MESSAGE_MODELS}


def _listed(where: dict[str, set[str]], kinds: set[str]) -> str:
    return "; ".join(f"{k} (in {', '.join(sorted(where.get(k, ())))})" for k in sorted(kinds))


def test_every_message_the_server_sends_is_in_the_catalogue():
    sent = sent_types()
    missing = set(sent) - set(catalogue.SERVER_MESSAGE_TYPES)
    assert not missing, ("sent to the browser but not declared in pneuma/core/messages.py: "
                         + _listed(sent, missing))


def test_every_server_message_in_the_catalogue_is_sent_somewhere():
    unused = set(catalogue.SERVER_MESSAGE_TYPES) - set(sent_types())
    assert not unused, f"declared in the catalogue but sent by nothing: {sorted(unused)}"


def test_every_handled_browser_message_is_in_the_catalogue_and_each_has_a_handler():
    handled = handled_types(model_types=MODEL_TYPES)
    unknown = set(handled) - set(catalogue.BROWSER_MESSAGE_TYPES)
    assert not unknown, "handled but not in the catalogue: " + _listed(handled, unknown)
    unhandled = set(catalogue.BROWSER_MESSAGE_TYPES) - set(handled)
    assert not unhandled, f"accepted from the browser but handled by nothing: {sorted(unhandled)}"


def test_the_page_sends_only_messages_the_server_accepts():
    sent = browser_sent_types()
    assert sent, "found no socket send in the page's modules: the scan is broken"
    unknown = set(sent) - set(catalogue.BROWSER_MESSAGE_TYPES)
    assert not unknown, "the page sends types the server refuses: " + _listed(sent, unknown)


@pytest.mark.parametrize(("heading", "declared"), [
    ("### Browser → server", catalogue.BROWSER_MESSAGE_TYPES),
    ("### Server → browser", catalogue.SERVER_MESSAGE_TYPES),
])
def test_docs_protocol_tables_list_exactly_the_catalogue(heading, declared):
    documented = protocol_table_types(PROTOCOL, heading)
    assert len(documented) == len(set(documented)), f"a type twice under {heading}: {documented}"
    assert set(documented) == set(declared), (
        f"docs/protocol.md, {heading}: missing {sorted(set(declared) - set(documented))}, "
        f"not in the catalogue {sorted(set(documented) - set(declared))}")


def test_each_declaration_names_its_own_type_once():
    for kinds in (catalogue.BROWSER_MESSAGE_TYPES, catalogue.SERVER_MESSAGE_TYPES):
        assert len(kinds) == len(set(kinds))
    for kind, declared in catalogue.SERVER_MESSAGES.items():
        hints = typing.get_type_hints(declared)
        assert typing.get_args(hints["type"]) == (kind,)


def test_the_scan_finds_a_message_added_in_any_of_the_usual_ways(tmp_path: Path):
    # The checks above are only as good as the scan: a new message type
    # written the ways the code writes them must be found, and a message
    # of another socket (the native extension's ``send({...})``) must not.
    source = tmp_path / "feature.py"
    source.write_text(textwrap.dedent('''
        import json

        def note_message(text):
            return {"type": "fresh_note", "text": text}

        class Feature:
            message_types = ("fresh_request",)

            def run(self, session, tab, send):
                session.emit({"type": "fresh_direct"})
                session.broadcast(note_message("hi"))
                event = {"type": "fresh_named"}
                self._emit(event)
                tab.send(json.dumps({"type": "fresh_one_tab"}))
                self._ask({"type": "fresh_forwarded"}, 5)
                send({"type": "extension_only"})

            async def _ask(self, message, timeout):
                self._broadcast(message)
    '''))
    sent = sent_types([source])
    assert set(sent) == {"fresh_note", "fresh_direct", "fresh_named", "fresh_one_tab",
                         "fresh_forwarded"}
    assert set(handled_types([source])) == {"fresh_request"}


async def test_a_real_session_sends_only_catalogued_messages_with_their_fields(tmp_path):
    # What a tab actually receives through one turn (its echo, the agent's
    # reply and result, status changes, a one-tab error) is declared, with
    # every field the declaration requires.
    async with serve("doc", tmp_path / "ws") as server:
        tab = await server.tab()
        await tab.say("hello")
        await server.agent.next_user_message()
        server.agent.reply("hi there")
        await tab.wait_for("result")
        await tab.send_raw(json.dumps({"type": "no_such_message"}))
        error = await tab.wait_for("error")
        assert error["message"].endswith(", ".join(catalogue.BROWSER_MESSAGE_TYPES))
        received = tab.received
    kinds = {m["type"] for m in received}
    assert {"session_init", "message_history", "user_message", "assistant", "result",
            "status_change", "error"} <= kinds
    for message in received:
        declared = catalogue.SERVER_MESSAGES.get(message["type"])
        assert declared is not None, f"not in the catalogue: {message}"
        missing = set(declared.__required_keys__) - set(message)  # type: ignore[attr-defined]
        assert not missing, f"{message['type']} without {sorted(missing)}: {message}"
