"""Keeping Pneuma's marker sections in a CLAUDE.md without touching anything else.

A section is the text between ``<!-- pneuma[:key]:start -->`` and the matching
end marker. Updating one section replaces only its body; sections that do
not exist yet are appended. A file whose markers are broken (an end without
a start, a start without an end, nested or duplicated pairs) is refused with
the line numbers, never rewritten by guesswork.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pneuma.host.modes import ClaudeMdSection

_MARKER = re.compile(r"<!-- pneuma(?::([a-z0-9][a-z0-9-]*))?:(start|end) -->")


class MarkerError(ValueError):
    """CLAUDE.md's Pneuma markers are malformed; nothing was changed."""

    def __init__(self, problems: list[str], path: str = "CLAUDE.md"):
        self.problems = problems
        super().__init__(
            f"{path} has malformed Pneuma markers: " + "; ".join(problems)
            + ". Fix or remove the markers by hand, then run again."
        )


@dataclass(frozen=True)
class _Span:
    key: str
    start: int  # offset of the start marker
    body_start: int  # just after the start marker
    body_end: int  # offset of the end marker
    end: int  # just after the end marker


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def find_sections(text: str, path: str = "CLAUDE.md") -> dict[str, _Span]:
    """Locate every marker pair, validating their structure."""
    problems: list[str] = []
    spans: dict[str, _Span] = {}
    open_key: str | None = None
    open_match: re.Match[str] | None = None
    for match in _MARKER.finditer(text):
        key = match.group(1) or ""
        kind = match.group(2)
        label = f"'{match.group(0)}' (line {_line_of(text, match.start())})"
        if kind == "start":
            if open_match is not None:
                problems.append(
                    f"{label} starts a section inside the unfinished section opened at line "
                    f"{_line_of(text, open_match.start())}"
                )
                continue
            if key in spans:
                problems.append(f"{label} duplicates a section already present")
            open_key, open_match = key, match
        else:
            if open_match is None:
                problems.append(f"{label} ends a section that was never started")
                continue
            if key != open_key:
                problems.append(
                    f"{label} does not match the start marker '{open_match.group(0)}' at line "
                    f"{_line_of(text, open_match.start())}"
                )
                open_key, open_match = None, None
                continue
            if key not in spans:
                spans[key] = _Span(key, open_match.start(), open_match.end(), match.start(),
                                   match.end())
            open_key, open_match = None, None
    if open_match is not None:
        problems.append(
            f"'{open_match.group(0)}' (line {_line_of(text, open_match.start())}) has no end marker"
        )
    if problems:
        raise MarkerError(problems, path)
    return spans


def render_block(section: ClaudeMdSection) -> str:
    body = section.body.strip("\n")
    return f"{section.start_marker}\n{body}\n{section.end_marker}"


def update_sections(text: str, sections: Iterable[ClaudeMdSection], path: str = "CLAUDE.md") -> str:
    """Return ``text`` with each section's body replaced (or the section
    appended). Sections are applied one at a time so each is independent."""
    for section in sections:
        spans = find_sections(text, path)
        block = render_block(section)
        span = spans.get(section.key)
        if span is not None:
            text = text[: span.start] + block + text[span.end :]
        else:
            if text and not text.endswith("\n"):
                text += "\n"
            if text.strip():
                text += "\n"
            text += block + "\n"
    # Validate the result too: a body that itself contains a marker would
    # corrupt the file on the next run.
    find_sections(text, path)
    return text


def read_section(text: str, key: str) -> str | None:
    """The body of one section, or None when it is absent."""
    span = find_sections(text).get(key)
    if span is None:
        return None
    return text[span.body_start : span.body_end].strip("\n")
