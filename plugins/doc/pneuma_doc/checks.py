"""The doc mode's checks after every turn (docs/checks.md): in every
Markdown file the turn changed, each relative link and image must point at
a file that exists in the workspace.

A target is read as the viewer reads it: relative to the linking file's
folder (``/x`` from the workspace's root), without its ``#fragment`` or
``?query``, percent-decoded. Links inside fenced code blocks and inline
code spans are not links; web addresses, ``mailto:`` and in-page anchors
are not checked. Each problem names the file, the line and the nearest
heading above it (the viewer's ``navigate-to`` shows it).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

from pneuma.api import CheckRequest, Problem, TurnCheck

# [text](target "title"), ![alt](target): the target up to a space or ")",
# or in angle brackets.
_INLINE = re.compile(r"(!?)\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>\n]*>|[^\s)]+)(?:\s+[\"'(][^)\n]*)?\s*\)")
# [label]: target
_DEFINITION = re.compile(r"^ {0,3}\[(?:[^\]\\]|\\.)+\]:\s*(<[^>\n]*>|\S+)")
_HTML = re.compile(r"<(img|a)\b[^>]*?\b(src|href)\s*=\s*[\"']([^\"']+)[\"']", re.I)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_PROBLEMS_PER_FILE = 20


def _lines_outside_code(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line with code spans blanked), skipping fenced blocks."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        yield number, _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def _targets(line: str) -> Iterator[tuple[bool, str]]:
    """(is an image, raw target) of every link on one line."""
    for match in _INLINE.finditer(line):
        yield match.group(1) == "!", match.group(2)
    definition = _DEFINITION.match(line)
    if definition:
        yield False, definition.group(1)
    for match in _HTML.finditer(line):
        yield match.group(1).lower() == "img", match.group(3)


def _local_path(source: str, raw: str) -> str | None:
    """The workspace-relative path a link points at, or None when it is not
    a local file (a web address, mailto:, an in-page anchor, empty)."""
    target = raw.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1].strip()
    if not target or target.startswith(("#", "//")) or _SCHEME.match(target):
        return None
    target = unquote(re.split(r"[#?]", target, maxsplit=1)[0])
    if not target:
        return None
    if target.startswith("/"):
        joined = target.lstrip("/")
    else:
        joined = posixpath.join(posixpath.dirname(source), target)
    return posixpath.normpath(joined)


def _exists(workspace: Path, path: str) -> bool:
    if path == ".." or path.startswith("../"):
        return False  # outside the workspace: the viewer cannot show it
    return (workspace / path).exists()


def check_file(workspace: Path, source: str, text: str) -> list[Problem]:
    """The broken links and missing images of one Markdown file."""
    problems: list[Problem] = []
    heading: str | None = None
    for number, line in _lines_outside_code(text):
        found = _HEADING.match(line)
        if found:
            heading = found.group(1)
        for image, raw in _targets(line):
            path = _local_path(source, raw)
            if path is None or _exists(workspace, path):
                continue
            what = "image" if image else "link"
            problems.append(Problem(
                f"{what} target {raw.strip('<> ')} does not exist (looked for {path})",
                file=source, line=number,
                locate={"file": source, **({"heading": heading} if heading else {})}))
            if len(problems) >= MAX_PROBLEMS_PER_FILE:
                return problems
    return problems


def broken_links(request: CheckRequest) -> list[Problem]:
    problems: list[Problem] = []
    for source in request.changed_with_suffix(".md", ".markdown"):
        path = request.workspace / source
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # gone since the turn: nothing to check
        problems.extend(check_file(request.workspace, source, text))
    return problems


CHECKS = [TurnCheck(mode="doc", name="links",
                    label={"en": "Links and images", "zh-CN": "链接与图片"},
                    run=broken_links)]
