"""`pneuma open FILE.html`: a new workspace from a shared file (issue 29,
item 2; docs/sharing.md, "Open a shared file"): the last turn's files (or a
chosen turn's), the mode recorded, the conversation kept as history that
`pneuma run` shows and whose summary reaches the agent once; hostile data
refused with E_BAD_ARGS and nothing written."""

from __future__ import annotations

import base64
import json
import signal
import tomllib
import zlib
from pathlib import Path

import aiohttp
import pytest
from click.testing import CliRunner

from pneuma.cli import cli
from pneuma.share.model import (
    EMPTY_DATA_ELEMENT,
    ShareData,
    SharedMessage,
    SharedTurn,
    ToolCall,
    content_hash,
    fill_template,
)
from tests.server.follow_up_runs import FakeAgent, Run, Tab

TEMPLATE = f"<!doctype html><title>shared</title>{EMPTY_DATA_ELEMENT}"
DECK_1 = b'<section class="slide"><h2>Hello</h2></section>\n'
DECK_2 = b'<section class="slide"><h2>Hello again</h2></section>\n'


def shared_deck() -> ShareData:
    data = ShareData(mode="slide", title="Launch deck", created_at=1_700_000_000_000)
    manifest = data.add_content(b'{"slides": [{"file": "slides/01-deck.html"}]}\n')
    one, two = data.add_content(DECK_1), data.add_content(DECK_2)
    note = data.add_content(b"speaker notes\n")
    data.turns = [
        SharedTurn("1", "make a deck", 1_700_000_001_000,
                   {"slides/01-deck.html": one, "manifest.json": manifest}),
        SharedTurn("2", "retitle and add a slide", 1_700_000_002_000,
                   {"slides/01-deck.html": two, "manifest.json": manifest, "assets/notes.txt": note},
                   [{"id": "slide:slides/01-deck.html:retitled", "where": "Slide 1",
                     "what": "title changed", "kind": "retitled", "files": ["slides/01-deck.html"],
                     "locate": {"file": "slides/01-deck.html"}, "revertible": True}], "mode"),
    ]
    data.conversation = [
        SharedMessage("user", "make a deck", 1_700_000_000_500),
        SharedMessage("assistant", "I wrote a two-slide deck.", 1_700_000_001_000,
                      [ToolCall("Write", "slides/01-deck.html")]),
        SharedMessage("user", "retitle and add a slide", 1_700_000_001_500),
        SharedMessage("assistant", "Retitled slide 1 and added slide 3.", 1_700_000_002_000),
    ]
    return data


def write_share(path: Path, data: ShareData) -> Path:
    path.write_text(fill_template(TEMPLATE, data), encoding="utf-8")
    return path


def pneuma_open(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["open", *args])
    return result.exit_code, result.stdout, result.stderr


def test_open_makes_a_workspace_with_the_last_turns_files(tmp_path: Path) -> None:
    source = write_share(tmp_path / "deck.html", shared_deck())
    code, out, err = pneuma_open(str(source), "--json")
    assert code == 0, err
    answer = json.loads(out)
    workspace = Path(answer["workspace"])
    assert workspace == tmp_path / "Launch deck"  # beside the file, named after its title
    assert (answer["turn"], answer["turns"], answer["messages"]) == (2, 2, 4)
    assert (workspace / "slides" / "01-deck.html").read_bytes() == DECK_2
    assert (workspace / "assets" / "notes.txt").read_bytes() == b"speaker notes\n"
    config = tomllib.loads((workspace / ".pneuma" / "config.toml").read_text())
    assert config["mode"] == "slide"


def test_open_at_a_chosen_turn_and_never_into_a_folder_with_files(tmp_path: Path) -> None:
    source = write_share(tmp_path / "deck.html", shared_deck())
    target = tmp_path / "first"
    code, _, err = pneuma_open(str(source), "-w", str(target), "--turn", "1")
    assert code == 0, err
    assert (target / "slides" / "01-deck.html").read_bytes() == DECK_1
    assert not (target / "assets").exists()
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep me")
    code, _, err = pneuma_open(str(source), "-w", str(taken))
    assert code == 2 and "E_CONFLICT" in err and "not empty" in err
    assert sorted(p.name for p in taken.iterdir()) == ["mine.txt"]
    code, _, err = pneuma_open(str(source), "-w", str(tmp_path / "x"), "--turn", "3")
    assert code == 2 and "E_BAD_ARGS" in err and "turns 1 to 2" in err
    code, _, err = pneuma_open("-w", str(tmp_path / "y"), "--turn", "1")  # no file: no launcher
    assert code == 2 and "go with a shared file" in err and not (tmp_path / "y").exists()


def _packed(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 9)).decode("ascii")


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../b",
                                  ".pneuma/session.json", ".git/config", "deck/.pneuma/x",
                                  ".claude/settings.json", "C:/x", "a\\..\\b"])
def test_hostile_paths_are_refused_and_nothing_is_written(tmp_path: Path, path: str) -> None:
    data = shared_deck()
    digest = data.add_content(b"planted\n")
    data.turns[-1].tree[path] = digest
    source = write_share(tmp_path / "hostile.html", data)
    target = tmp_path / "out"
    code, _, err = pneuma_open(str(source), "-w", str(target))
    assert code == 2 and "E_BAD_ARGS" in err, err
    assert not target.exists()
    assert not (tmp_path / "outside.txt").exists()


def test_a_huge_content_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    data = shared_deck()
    bomb = bytes(65 * 1024 * 1024)  # 65 MiB of zeros: about 65 KB compressed
    digest = content_hash(bomb)
    data.files[digest] = _packed(bomb)
    data.turns[-1].tree["big.bin"] = digest
    source = write_share(tmp_path / "bomb.html", data)
    assert source.stat().st_size < 1024 * 1024
    code, _, err = pneuma_open(str(source), "-w", str(tmp_path / "out"))
    assert code == 2 and "E_BAD_ARGS" in err and "big.bin" in err
    assert not (tmp_path / "out").exists()


def test_a_content_that_does_not_match_its_hash_is_refused(tmp_path: Path) -> None:
    data = shared_deck()
    data.files[data.turns[-1].tree["slides/01-deck.html"]] = _packed(b"something else\n")
    source = write_share(tmp_path / "forged.html", data)
    code, _, err = pneuma_open(str(source), "-w", str(tmp_path / "out"))
    assert code == 2 and "E_BAD_ARGS" in err and "hash" in err


def test_a_file_that_is_no_share_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<!doctype html><p>just a page</p>")
    code, _, err = pneuma_open(str(page), "-w", str(tmp_path / "out"))
    assert code == 2 and "E_PARSE_FAIL" in err and "not a Pneuma shared file" in err


async def test_run_shows_the_history_and_the_agent_gets_its_summary_once(tmp_path: Path) -> None:
    source = write_share(tmp_path / "deck.html", shared_deck())
    workspace = tmp_path / "opened"
    code, _, err = pneuma_open(str(source), "-w", str(workspace))
    assert code == 0, err
    agent = FakeAgent(tmp_path / "agent")
    run = Run(workspace, agent, tmp_path / "home", "run")
    try:
        async with Tab(run) as tab:
            history = await tab.wait_for("message_history")
            shown = [(m["type"], m.get("content") or m.get("text") or
                      m["message"]["content"][0]["text"]) for m in history["messages"]
                     if m["type"] in ("user_message", "assistant", "system_note")]
            assert shown[0][0] == "system_note" and "deck.html" in shown[0][1]
            # Each turn as a served turn logs it: its checkpoint, its files, its changes.
            logged = {(m["type"], m["ref"]): m for m in history["messages"] if "ref" in m}
            assert logged[("turn_checkpoint", "2")]["client_msg_id"] == "shared-2"
            assert logged[("turn_changes", "2")]["changes"]["added"] == ["assets/notes.txt"]
            assert logged[("turn_changes", "2")]["changes"]["modified"] == ["slides/01-deck.html"]
            assert logged[("turn_described", "2")]["changes"][0]["what"] == "title changed"
            assert ("turn_described", "1") not in logged  # the file described no change of it
            assert shown[1:] == [
                ("user_message", "make a deck"),
                ("assistant", "I wrote a two-slide deck.\n\n_Tools: Write: slides/01-deck.html_"),
                ("user_message", "retitle and add a slide"),
                ("assistant", "Retitled slide 1 and added slide 3."),
            ]
            # Replay lists the imported turns, each with its checkpoint, and names the file.
            replay_url = run.ws_url.replace("ws://", "http://").replace(
                "/ws/browser/", "/api/replay?session=").replace("?token=", "&token=")
            async with aiohttp.ClientSession() as http, http.get(replay_url) as answer:
                replay = await answer.json()
            assert replay["imported"] == "deck.html"
            assert [(t["text"], t["ref"], t["replies"]) for t in replay["turns"]] == [
                ("make a deck", "1", ["I wrote a two-slide deck.\n\n_Tools: Write: slides/01-deck.html_"]),
                ("retitle and add a slide", "2", ["Retitled slide 1 and added slide 3."])]
            assert replay["turns"][1]["changes"] == [{"where": "Slide 1", "what": "title changed"}]
            # Each turn is the workspace's own checkpoint: what it left, read from the store.
            for ref, deck in (("1", DECK_1), ("2", DECK_2)):
                async with aiohttp.ClientSession() as http, http.get(replay_url.replace(
                        "/api/replay?", f"/api/checkpoints/{ref}/state/after/content/"
                        "slides/01-deck.html?")) as answer:
                    assert await answer.read() == deck
            await tab.say("now make slide 2 blue")
            await tab.wait_for("result")
            await tab.say("and slide 3 red")
            await tab.wait_for("result", lambda m: m["seq"] > history["last_seq"] + 4)
    finally:
        run.stop(signal.SIGTERM)
    first, second = agent.user_texts()[-2:]
    assert "<shared-conversation>" in first and "deck.html" in first
    assert "[person] retitle and add a slide" in first
    assert "[agent] Retitled slide 1 and added slide 3." in first
    assert first.endswith("now make slide 2 blue")
    assert "<shared-conversation>" not in second


def _files(workspace: Path) -> dict[str, bytes]:
    return {p.relative_to(workspace).as_posix(): p.read_bytes() for p in sorted(workspace.rglob("*"))
            if p.is_file() and ".pneuma" not in p.relative_to(workspace).parts}


def test_a_shared_session_opens_as_it_was_at_its_last_turn_and_at_any_turn(tmp_path: Path) -> None:
    """The round trip: `pneuma share` of a 5-turn slide session, then `pneuma open`."""
    from pneuma.checkpoints import Checkpoints
    from pneuma.share.builder import write_share
    from pneuma.testing.slide_session import make_slide_session

    session = make_slide_session(tmp_path / "made", 5)
    shared = write_share(tmp_path / "made", tmp_path / "talk.html")
    code, out, err = pneuma_open(str(shared.path), "-w", str(tmp_path / "last"), "--json")
    assert code == 0, err
    assert json.loads(out)["turns"] == 5
    assert _files(tmp_path / "last") == session.after[-1]
    refs = [c.ref for c, _ in Checkpoints(tmp_path / "last").history()]
    assert refs == ["1", "2", "3", "4", "5"]  # every turn, the workspace's own checkpoint
    code, _, err = pneuma_open(str(shared.path), "-w", str(tmp_path / "second"), "--turn", "2")
    assert code == 0, err
    assert _files(tmp_path / "second") == session.after[1]
