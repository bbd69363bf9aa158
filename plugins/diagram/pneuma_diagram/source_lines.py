"""Where mermaid's line numbers are in the ``.mmd`` file.

mermaid does not parse the file as written: before its parser runs
(``preprocessDiagram`` in mermaid's ``mermaidAPI``) it turns CR LF and a lone
CR into LF, cuts the front matter (``--- … ---`` and the blank lines after
it), cuts every ``%%{…}%%`` directive (wherever it is; its line stays as a
blank line, a directive over several lines leaves one), cuts every ``%%``
comment line that has text after the ``%%`` (wherever it is, together with
the blank lines right above it; a bare ``%%`` stays) and then every blank
line at the top. Its parse errors count lines in what is left, so a file
with front matter or comments above an error was told the wrong line.

``file_line`` replays those steps on the file, keeping for every character
the file line it came from, and reads the line mermaid named off the result.
The diagram types that parse with their comments kept
(``preserveCommentsWhenParsing``: agentflow-beta, eventmodeling) skip the
comment and blank-line steps, as mermaid does for them.

The viewer runs the same rules in static/source-lines.js; tests/modes/
test_diagram_error_lines.py holds both to the same cases and to the real
mermaid bundle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pneuma_diagram.render import DiagramError

# JavaScript's \s (what mermaid's regexes and trimStart() mean by space)
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_SPACE_CHARS = frozenset("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
                            + "".join(chr(c) for c in range(0x2000, 0x200B)))
_JS_STRIP = "".join(sorted(_JS_SPACE_CHARS))
_S = f"[{_JS_SPACE}]"
_W = "[A-Za-z0-9_]"  # JavaScript's \w (no u flag)
_DOT = "[^\n\r\u2028\u2029]"  # JavaScript's .
# mermaid's directiveRegex (src/diagram-api/regexes.ts), in Python's syntax
_DIRECTIVE = re.compile(
    rf"%{{2}}\{{{_S}*(?:({_W}+){_S}*:|({_W}+)){_S}*(?:({_W}+)|((?:(?!\}}%{{2}}){_DOT}|\r?\n)*))?{_S}*(?:\}}%{{2}})?",
    re.I)
# mermaid's cleanupComments (src/diagram-api/comments.ts)
# (JavaScript's ^ under the m flag starts a line after U+2028 and U+2029 too)
_COMMENT_LINE = re.compile(rf"(?:^|(?<=[\u2028\u2029])){_S}*%%(?!\{{)[^\n]+\n?", re.M)
# the types whose db sets preserveCommentsWhenParsing: their parser sees the comments
_KEEPS_COMMENTS = re.compile(rf"^{_S}*(?:agentflow-beta\b|eventmodeling)")
_NO_TYPE = re.compile(r"No diagram type detected|UnknownDiagramError|Diagram \S+ not found", re.I)
# where mermaid's messages name a line: "Parse error on line 3:", "Lexer error on line 3, column 7"
_LINE_IN_MESSAGE = re.compile(r"(\berror on line )(\d+)", re.I)


@dataclass(frozen=True)
class _Traced:
    """Text and, for each of its characters, the 0-based file line it came from."""

    text: str
    origin: tuple[int, ...]

    def without(self, spans: list[tuple[int, int]]) -> _Traced:
        kept_text: list[str] = []
        kept_origin: list[int] = []
        at = 0
        for start, end in spans:
            kept_text.append(self.text[at:start])
            kept_origin.extend(self.origin[at:start])
            at = end
        kept_text.append(self.text[at:])
        kept_origin.extend(self.origin[at:])
        return _Traced("".join(kept_text), tuple(kept_origin))

    def without_matches(self, pattern: re.Pattern[str]) -> _Traced:
        return self.without([m.span() for m in pattern.finditer(self.text) if m.end() > m.start()])


def _normalised(text: str) -> _Traced:
    """``text`` with CR LF and lone CR as LF, as mermaid's cleanupText does;
    a file line is a line of this text."""
    chars: list[str] = []
    origin: list[int] = []
    line = 0
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\r":
            char = "\n"
            if text[i + 1:i + 2] == "\n":
                i += 1
        chars.append(char)
        origin.append(line)
        if char == "\n":
            line += 1
        i += 1
    return _Traced("".join(chars), tuple(origin))


def _is_break(char: str) -> bool:
    return char in "\n\r"


def _last_break_in_space_run(text: str, start: int) -> int:
    found = -1
    i = start
    while i < len(text) and text[i] in _JS_SPACE_CHARS:
        if _is_break(text[i]):
            found = i
        i += 1
    return found


def front_matter_length(text: str) -> int:
    """How many characters of ``text`` are front matter (mermaid's
    matchFrontMatter, src/diagram-api/regexes.ts): 0 when there is none."""
    cursor = 0
    while cursor < len(text) and text[cursor] in _JS_SPACE_CHARS and not _is_break(text[cursor]):
        cursor += 1
    indent = text[:cursor]
    if not text.startswith("---", cursor):
        return 0
    opening_ends: list[int] = []
    i = cursor + 3
    while i < len(text) and text[i] in _JS_SPACE_CHARS:
        if _is_break(text[i]):
            opening_ends.append(i)
        i += 1
    if not opening_ends:
        return 0
    fence = indent + "---"

    def closing_end(at: int) -> int:
        if _is_break(text[at]) and text.startswith(fence, at + 1):
            return _last_break_in_space_run(text, at + 1 + len(fence))
        return -1

    last_fence = -1
    for at in range(opening_ends[0] + 1, len(text)):
        if closing_end(at) != -1:
            last_fence = at
    if last_fence == -1:
        return 0
    opening_end = opening_ends[0]
    for candidate in opening_ends:
        if candidate < last_fence:
            opening_end = candidate
    for at in range(opening_end + 1, last_fence + 1):
        end = closing_end(at)
        if end != -1:
            return end + 1
    return 0


def _trimmed_start(traced: _Traced) -> _Traced:
    n = 0
    while n < len(traced.text) and traced.text[n] in _JS_SPACE_CHARS:
        n += 1
    return traced.without([(0, n)])


def parsed_text(text: str) -> _Traced:
    """The text mermaid's parser reads for ``text``, traced to the file's lines."""
    traced = _normalised(text)
    traced = traced.without([(0, front_matter_length(traced.text))])
    with_comments = traced.without_matches(_DIRECTIVE)
    cleaned = _trimmed_start(with_comments.without_matches(_COMMENT_LINE))
    if _KEEPS_COMMENTS.match(_first_code_line(cleaned.text)):
        return with_comments
    return cleaned


def _first_code_line(text: str) -> str:
    """The first line with anything but a %% comment on it (what mermaid
    tries to read a diagram type from)."""
    for line in text.split("\n"):
        if line.split("%%", 1)[0].strip(_JS_STRIP):
            return line
    return ""


def _file_line_count(text: str) -> int:
    lines = _normalised(text).text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return len(lines)


def file_line(text: str, mermaid_line: int | None) -> int | None:
    """The 1-based line of the file ``text`` that mermaid calls
    ``mermaid_line`` (1-based) in its errors; None stays None."""
    if mermaid_line is None or mermaid_line < 1:
        return mermaid_line
    parsed = parsed_text(text)
    starts = [0] + [i + 1 for i, char in enumerate(parsed.text) if char == "\n"]
    last = _file_line_count(text)
    if mermaid_line <= len(starts):
        start = starts[mermaid_line - 1]
        if start < len(parsed.origin):
            return min(parsed.origin[start] + 1, last)
    # past the end (mermaid appends a newline; "got EOF" names the line after): the last line
    return last


def type_line(text: str) -> int | None:
    """The 1-based file line mermaid reads the diagram's type from (its
    first line of code), or None when the file has no code at all."""
    parsed = parsed_text(text)
    at = 0
    for line in parsed.text.split("\n"):
        if line.split("%%", 1)[0].strip(_JS_STRIP):
            first = at + len(line) - len(line.lstrip(_JS_STRIP))
            return parsed.origin[first] + 1
        at += len(line) + 1
    return None


def in_file_lines(text: str, error: DiagramError) -> DiagramError:
    """``error`` as mermaid reported it for ``text``, with its line and the
    lines its message names counted in the file; a file whose type mermaid
    did not recognise gets its type line."""
    if _NO_TYPE.search(error.message):
        return replace(error, line=type_line(text))
    message = _LINE_IN_MESSAGE.sub(lambda m: m.group(1) + str(file_line(text, int(m.group(2)))), error.message)
    return replace(error, line=file_line(text, error.line), message=message)
