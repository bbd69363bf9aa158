"""The Python parser agrees with the real webgal-parser 4.5.18 (engine command table).

The oracle's output for every corpus scene is in corpus/<project>/parsed/*.json and for
the hand-written probes in cases/edge_cases.engine.json; every sentence must match:
command, commandRaw, content, args (typed), speaker, preload assets, sub-scenes, comment.
"""

from __future__ import annotations

import json

import pytest
from corpus import CORPUS, REFERENCE

from pneuma_webgal.script import parse_line, parse_scene

PAIRS = [(REFERENCE / "cases" / "edge_cases.txt", REFERENCE / "cases" / "edge_cases.engine.json")] + [
    (CORPUS / p.parent.parent.name / "scene" / (p.stem + ".txt"), p)
    for p in sorted(CORPUS.glob("*/parsed/*.json"))
]


def _compare(txt, js):
    oracle = json.loads(js.read_text(encoding="utf-8"))["sentenceList"]
    ours = parse_scene(txt.read_text(encoding="utf-8"), txt.name).sentences
    return oracle, ours


def test_corpus_agreement_figure(capsys):
    total = same = 0
    for txt, js in PAIRS:
        oracle, ours = _compare(txt, js)
        assert len(ours) == len(oracle), txt
        for a, b in zip(ours, oracle):
            total += 1
            same += a.to_oracle() == b
    with capsys.disabled():
        print(f"\nparser agreement with webgal-parser 4.5.18: {same}/{total} sentences "
              f"({100 * same / total:.2f} %) in {len(PAIRS)} files")
    assert total > 11000
    assert same == total


@pytest.mark.parametrize("txt,js", PAIRS, ids=[f"{t.parent.parent.name}/{t.name}" for t, _ in PAIRS])
def test_every_sentence_matches_the_oracle(txt, js):
    oracle, ours = _compare(txt, js)
    assert len(ours) == len(oracle)
    for a, b in zip(ours, oracle):
        assert a.to_oracle() == b, f"{txt.name}:{b['line'] + 1}: {a.raw!r}"


def test_speaker_rules():
    assert parse_line("WebGAL:hi;").speaker == "WebGAL"
    assert parse_line(":narration;").speaker == ""
    cont = parse_line("more text;")
    assert cont.command == "say" and cont.speaker is None and cont.content == "more text"
    spaced = parse_line("changeBg : x;")
    assert spaced.command == "say" and spaced.speaker == "changeBg "
    assert parse_line("ChangeBg:x;").command == "say"
    assert parse_line("changeBg：x;").speaker is None  # full-width colon is no separator
    assert parse_line("end;").command == "end"
    assert parse_line("end -next;").command == "say"
    assert parse_line("if:a>1;").speaker == "if"  # not registered by the engine


def test_args_are_typed_like_javascript():
    s = parse_line("WebGAL:x -a -b=false -c=007 -d=0x10 -e=1e3 -f= -g=Infinity -h=text -v1.wav;")
    assert s.args == [("speaker", "WebGAL"), ("a", True), ("b", False), ("c", 7), ("d", 16), ("e", 1000),
                      ("f", 0), ("g", float("inf")), ("h", "text"), ("vocal", "./game/vocal/v1.wav")]
    assert parse_line("bgm:a.mp3 -next=false;").args[:2] == [("next", True), ("next", False)]


def test_comments_and_line_count():
    scene = parse_scene("\ufeffchangeBg:a.png; comment\n\n; only a comment\r\nend")
    assert [s.command for s in scene.sentences] == ["changeBg", "comment", "comment", "end"]
    assert scene.sentences[0].inline_comment == "comment" and scene.sentences[0].terminated
    assert not scene.sentences[3].terminated
