"""Issue 25, item 10 under load: a diagram's syntax error names the file's
line however the file is dressed.

One part writes random diagrams (flowchart, sequence, pie) with front
matter, ``%%{init}%%`` directives (one line or several), ``%%`` comments,
blank lines, CR LF and a misspelled type here and there, each with one
broken statement at a known line, and asks the real mermaid bundle: the
line Pneuma reports (source_lines.py, and the viewer's source-lines.js) must
be the broken statement's. The other part throws random text with CRs,
U+2028, BOMs, fences and stray ``%%`` at both implementations and holds them
to the same answers.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from pathlib import Path

import pytest

from pneuma_diagram.render import run_mermaid
from pneuma_diagram.source_lines import file_line, in_file_lines, type_line
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "diagram" / "pneuma_diagram"
SOURCE_LINES_JS = PLUGIN / "static" / "source-lines.js"
DIAGRAMS = 150
TEXTS = 3000
SEED = 2510

# each type: its header, good statements, the broken one
TYPES = {
    "flowchart": ("flowchart TD", ["  A{n} --> B{n}", "  B{n} --> C{n}[label {n}]"], "  X -->> Y"),
    "sequence": ("sequenceDiagram", ["  A->>B: hi {n}", "  B-->>A: ok {n}"], "  A-->>>B: x"),
    "pie": ("pie", ['  "a{n}" : {n}'], '  "b" x 2'),
}


def _dressing(rng: random.Random) -> list[str]:
    """Lines mermaid cuts or keeps blank between statements."""
    choice = rng.randrange(6)
    if choice == 0:
        return [" " * rng.randrange(3) + "%% note " + str(rng.randrange(99))]
    if choice == 1:
        return [""] * rng.randrange(1, 3)
    if choice == 2:
        return ["", "%% after a blank"]
    if choice == 3:
        return ['%%{init: {"theme": "neutral"}}%%']
    if choice == 4:
        return ["%%{init: {", '  "theme": "forest"', "}}%%"]
    return []


def _diagram(rng: random.Random, kind: str, misspelled: bool) -> tuple[str, int]:
    """A random file of ``kind`` and the file line of its error."""
    header, good, bad = TYPES[kind]
    lines: list[str] = []
    if rng.random() < 0.5:
        indent = "  " if rng.random() < 0.2 else ""
        lines += [indent + "---", indent + "title: t" + str(rng.randrange(9)), indent + "---"]
        lines += [""] * rng.randrange(2)
    for _ in range(rng.randrange(3)):
        lines += _dressing(rng)
    type_at = len(lines) + 1
    lines.append(header.replace("flowchart", "flowchar").replace("sequenceDiagram", "sequenceDiagran")
                 .replace("pie", "pei") if misspelled else header)
    statements = [rng.choice(good).format(n=n) for n in range(rng.randrange(1, 5))]
    broken_at = rng.randrange(len(statements) + 1)
    statements.insert(broken_at, bad)
    error_line = type_at
    for statement in statements:
        if kind != "pie" or statement is bad:  # pie takes no directive after its data starts
            lines += _dressing(rng)
        lines.append(statement)
        if statement is bad:
            error_line = len(lines)
    newline = "\r\n" if rng.random() < 0.2 else "\n"
    return newline.join(lines) + newline, (type_at if misspelled else error_line)


def _js(queries: list[dict[str, object]]) -> list[dict[str, object]]:
    script = ("const m = await import(process.argv[1]);"
              "const qs = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(qs.map((q) => q.type ? {line: m.typeLine(q.text)}"
              " : q.message != null ? m.inFileLines(q.text, q) : {line: m.fileLine(q.text, q.line)})));")
    done = subprocess.run(["node", "--input-type=commonjs", "-e", f"(async () => {{ {script} }})()",
                           SOURCE_LINES_JS.as_uri()], input=json.dumps(queries),
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def test_random_dressed_diagrams_name_their_broken_line_as_mermaid_reads_them() -> None:
    rng = random.Random(SEED)
    files = [_diagram(rng, rng.choice(list(TYPES)), rng.random() < 0.15) for _ in range(DIAGRAMS)]
    started = time.monotonic()
    outcomes = run_mermaid([text for text, _ in files], render=False)
    python = []
    for (text, line), outcome in zip(files, outcomes, strict=True):
        assert outcome.error is not None and not outcome.left_out, (text, outcome)
        mapped = in_file_lines(text, outcome.error)
        assert mapped.line == line, (text, outcome.error, mapped)
        python.append((outcome.error, mapped))
    viewer = _js([{"text": text, "message": raw.message, "line": raw.line}
                  for (text, _), (raw, _m) in zip(files, python, strict=True)])
    for (text, line), (_raw, mapped), js in zip(files, python, viewer, strict=True):
        assert js["line"] == line and js["message"] == mapped.message, text
    moved = sum(1 for raw, mapped in python if raw.line != mapped.line)
    assert moved > DIAGRAMS // 3  # the dressing moves most errors away from mermaid's number
    record("25.10 diagram error lines",
           f"{count(DIAGRAMS)} random dressed diagrams through the real mermaid "
           f"({time.monotonic() - started:.1f} s; mermaid's own number was another line for {count(moved)}): "
           "every error at its file line in Python and the viewer")


_PIECES = ["---", "  ---", "title: x", "flowchart TD", "flowchar TD", "  A --> B", "%%", "%% c", "  %% c",
           "%%{init: {}}%%", "%%{init: {", "}}%%", "", "   ", "\t", "\ufeff", "a %% b", "%%{wrap}%%",
           "agentflow-beta", "eventmodeling", "pie"]
_JOINERS = ["\n", "\r\n", "\r", "\u2028", "\n\n"]


def test_python_and_the_viewer_agree_on_random_text() -> None:
    rng = random.Random(SEED + 1)
    texts = ["".join(rng.choice(_PIECES) + rng.choice(_JOINERS) for _ in range(rng.randrange(1, 12)))
             for _ in range(TEXTS)]
    queries: list[dict[str, object]] = []
    expected: list[int | None] = []
    for text in texts:
        line = rng.randrange(0, 14)
        queries.append({"text": text, "line": line})
        expected.append(file_line(text, line))
        queries.append({"text": text, "type": True})
        expected.append(type_line(text))
    answers = _js(queries)
    for query, want, got in zip(queries, expected, answers, strict=True):
        assert got["line"] == want, query
    record("25.10 diagram error lines",
           f"{count(len(queries))} line and type-line questions on {count(TEXTS)} random texts: "
           "Python and the viewer's module gave the same answers")
