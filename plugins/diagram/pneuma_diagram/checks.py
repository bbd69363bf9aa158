"""The diagram mode's check after every turn (docs/checks.md): every
``*.mmd`` file the turn changed must parse.

It runs the same mermaid bundle the viewer draws with, in headless Chromium
(render.py, as ``validate_diagram`` does), and names the error's line in
the file (mermaid counts lines after front matter; source_lines.py
translates). A diagram mermaid leaves out (over one of its limits, out of
time) is a warning, not a syntax error.
"""

from __future__ import annotations

from pneuma.api import CheckRequest, Problem, TurnCheck
from pneuma_diagram.diagrams import SUFFIX
from pneuma_diagram.render import run_mermaid
from pneuma_diagram.source_lines import in_file_lines

MAX_FILE_BYTES = 1024 * 1024


def _first_line(message: str) -> str:
    """mermaid's message is several lines (the line, a caret, what it
    expected): the first and the last say it."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else "the diagram does not parse"
    return f"{lines[0]} {lines[-1]}"


def diagrams_parse(request: CheckRequest) -> list[Problem]:
    files: list[str] = []
    texts: list[str] = []
    for path in request.changed_with_suffix(SUFFIX):
        try:
            data = (request.workspace / path).read_bytes()
        except OSError:
            continue
        if len(data) <= MAX_FILE_BYTES:
            files.append(path)
            texts.append(data.decode("utf-8", errors="replace"))
    if not files:
        return []
    problems: list[Problem] = []
    for path, text, outcome in zip(files, texts, run_mermaid(texts, render=False), strict=True):
        if outcome.ok:
            continue
        if outcome.error is None:
            problems.append(Problem(f"mermaid left the diagram out: {outcome.left_out or 'no answer'}",
                                    file=path, severity="warning", locate={"file": path}))
            continue
        error = in_file_lines(text, outcome.error)
        problems.append(Problem(_first_line(error.message), file=path, line=error.line,
                                locate={"file": path}))
    return problems


CHECKS = [TurnCheck(mode="diagram", name="parse",
                    label={"en": "Diagrams parse", "zh-CN": "图表可解析"},
                    run=diagrams_parse)]
