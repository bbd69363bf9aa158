"""The diagram mode describes a turn in nodes and edges, from mermaid's own
parser, with a Python scanner that agrees with it when mermaid cannot run
(issue 28, item 1)."""

from __future__ import annotations

import time

import pytest

from pneuma.api import TurnFilesFromMaps
from pneuma.host.turn_changes import describe_turn
from pneuma_diagram import changes, graph_parse
from pneuma_diagram.changes import DESCRIBER
from pneuma_diagram.render import MERMAID_BUNDLE

needs_mermaid = pytest.mark.skipif(not MERMAID_BUNDLE.is_file(), reason="the mermaid bundle is not built")

BEFORE = {
    "flow.mmd": b"flowchart TD\n  A[Start] --> C[Done]\n  C --> D\n",
    "talk.mmd": b"sequenceDiagram\n  participant Alice\n  Alice->>Bob: hi\n",
    "old.mmd": b"pie\n  \"a\" : 1\n",
}
AFTER = {
    "flow.mmd": b"flowchart TD\n  A[Begin] -->|yes| B(Go)\n  A --> C[Done]\n",
    "talk.mmd": b"sequenceDiagram\n  participant Alice\n  Alice->>Bob: hello\n  Bob-->>Alice: yo\n",
    "new.mmd": b"flowchart LR\n  X --> Y\n",
    # front matter and a comment above the error: the line is the file's, not mermaid's
    "broken.mmd": b"---\ntitle: t\n---\n%% draft\nflowchart TD\n  A --> B\n  B -->\n  C[[x\n",
}
EXPECTED = [
    ("diagram:broken.mmd", "added (does not parse, line 8"),
    ("diagram:flow.mmd", "node A relabelled “Begin” · node B added · node D removed · edge A→B added · "
                         "edge C→D removed"),
    ("diagram:new.mmd", "added (flowchart-v2, 2 nodes)"),
    ("diagram:old.mmd", "removed"),
    ("diagram:talk.mmd", "edge Alice→Bob relabelled “hello” · edge Bob→Alice added"),
]


def _check(turn) -> None:
    got = [(c.id, c.to_json()["what"]["en"]) for c in turn.changes]
    assert [i for i, _ in got] == [i for i, _ in EXPECTED]
    for (_, what), (_, expected) in zip(got, EXPECTED, strict=True):
        assert what.startswith(expected), (what, expected)


@needs_mermaid
def test_a_turn_is_described_from_mermaids_own_parse_in_one_call() -> None:
    calls: list[int] = []
    original = graph_parse.parse_with_mermaid

    def counted(sources, budget_s=graph_parse.BUDGET_S):
        calls.append(len(sources))
        return original(sources, budget_s)

    changes.parse_with_mermaid = counted  # type: ignore[assignment]
    try:
        turn = describe_turn(DESCRIBER, TurnFilesFromMaps(BEFORE, AFTER))
    finally:
        changes.parse_with_mermaid = original  # type: ignore[assignment]
    assert calls == [6]  # both sides of the two changed diagrams, and the two new ones
    assert turn.source == "mode"
    _check(turn)
    flow = next(c for c in turn.changes if c.id == "diagram:flow.mmd")
    assert flow.locate == {"file": "flow.mmd", "node": "A"}
    broken = next(c for c in turn.changes if c.id == "diagram:broken.mmd")
    assert broken.locate == {"file": "broken.mmd", "line": 8}
    assert broken.to_json()["what"]["zh-CN"] == "新增（无法解析，第 8 行）"


def test_without_mermaid_the_python_scanner_gives_the_same_changes(monkeypatch) -> None:
    def unavailable(sources, budget_s=0.0):
        raise graph_parse.MermaidUnavailable("no Chromium here")

    monkeypatch.setattr(changes, "parse_with_mermaid", unavailable)
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps(BEFORE, {**AFTER, "broken.mmd": b"flowchart TD\n  A --> B\n"}))
    got = {c.id: c.to_json()["what"]["en"] for c in turn.changes}
    assert got["diagram:flow.mmd"] == dict(EXPECTED)["diagram:flow.mmd"]
    assert got["diagram:talk.mmd"] == dict(EXPECTED)["diagram:talk.mmd"]
    assert got["diagram:new.mmd"] == "added (flowchart-v2, 2 nodes)"


FLOWCHARTS = [
    "flowchart TD\n  A[Start] -->|yes| B(Go)\n  B --> C{Done?}\n  C -- no --> A\n  C ==> D((End))\n",
    "graph LR\n  a & b --> c\n  c -.-> d[\"quoted label\"]\n  %% a comment\n  d --- e;e --> f\n",
    "flowchart TB\n  subgraph one\n    x1[One] --> x2[Two]\n  end\n  x2 --> y>Flag]\n  classDef k fill:#f00\n",
    "sequenceDiagram\n  participant A as Alice\n  actor B\n  A->>B: Hello\n  B-->>A: Hi\n  A-)B: async\n",
]


@needs_mermaid
def test_the_python_scanner_names_what_mermaid_names_for_flowcharts_and_sequences() -> None:
    from_mermaid = graph_parse.parse_with_mermaid(FLOWCHARTS)
    for text, mermaid in zip(FLOWCHARTS, from_mermaid, strict=True):
        python = graph_parse.parse_in_python(text)
        assert mermaid.ok, mermaid
        assert python.nodes == mermaid.nodes, text
        assert python.edges == mermaid.edges, text


def test_unreadable_and_unknown_diagrams_are_changes_and_never_raise(monkeypatch) -> None:
    monkeypatch.setattr(changes, "parse_with_mermaid", lambda sources, budget_s=0.0: (_ for _ in ()).throw(
        graph_parse.MermaidUnavailable("none")))
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps(
        {"a.mmd": b"\xff\xfe", "g.mmd": b"gantt\n  title A\n"},
        {"a.mmd": b"flowchart TD\n A-->B\n", "g.mmd": b"gantt\n  title B\n", "notes.txt": b"x"}))
    got = {c.id: c.to_json()["what"]["en"] for c in turn.changes}
    assert got == {"diagram:a.mmd": "parses again (flowchart-v2, 2 nodes)", "diagram:g.mmd": "gantt changed",
                   "file:notes.txt": "added"}


def test_a_two_thousand_line_flowchart_is_scanned_in_a_few_milliseconds() -> None:
    text = "flowchart TD\n" + "\n".join(f"  n{i}[Step {i}] --> n{i + 1}" for i in range(2000))
    started = time.perf_counter()
    graph = graph_parse.parse_in_python(text)
    took = time.perf_counter() - started
    assert graph.nodes is not None and len(graph.nodes) == 2001 and graph.edges is not None
    assert took < 0.25, took


@needs_mermaid
def test_diagrams_over_mermaids_limits_are_described_not_called_broken() -> None:
    # over maxTextSize (50,000 characters) or maxEdges (500) mermaid answers
    # with an error: the scanner reads them instead
    long = "\n".join(f"  step{i}[A long enough label for step {i}] --> step{i + 1}" for i in range(900))
    many = "\n".join(f"  s{i} --> s{i + 1}" for i in range(600))
    before = {"long.mmd": f"flowchart TD\n{long}\n".encode(), "many.mmd": f"flowchart TD\n{many}\n".encode()}
    after = {"long.mmd": f"flowchart TD\n{long}\n  step900 --> done\n".encode(),
             "many.mmd": f"flowchart TD\n{many}\n  s600 --> done\n".encode()}
    assert len(after["long.mmd"]) > 50_000 > len(after["many.mmd"])
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps(before, after))
    assert [c.to_json()["what"]["en"] for c in turn.changes] == [
        "node done added · edge step900→done added", "node done added · edge s600→done added"]


def test_the_diagram_mode_registers_its_describer() -> None:
    from pneuma.host.plugins import build_plugin_manager
    from pneuma.host.turn_changes import all_describers

    assert all_describers(build_plugin_manager())["diagram"] is DESCRIBER
