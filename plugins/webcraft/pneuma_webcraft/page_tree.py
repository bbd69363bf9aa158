"""A page's elements and the lines of its source they span, read by the
stdlib's ``html.parser`` (never a browser), and how the webcraft viewer's
picker names one (bridge.js ``selectorOf``): what the change list of a turn
(changes.py) names its changes by.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser

from pneuma.api import split_lines

_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
# Elements too small to name a change by: the block around them does.
INLINE = frozenset("a abbr b bdi bdo br cite code data dfn em i kbd mark q s samp small span strong sub "
                   "sup time u var wbr img svg path use label".split())
_LANDMARKS = frozenset("section header footer main nav article aside form".split())
# Landmarks a heading names (a page's main or header is named by its tag).
_HEADED = frozenset("section article aside".split())
_SPACE = re.compile(r"\s+")


@dataclass(eq=False)
class Element:
    tag: str
    attrs: dict[str, str]
    start: int  # 0-based line of its start tag
    parent: Element | None
    end: int = -1  # 0-based line of its end tag (its start line when it has none)
    children: list[Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # a heading's text

    @property
    def classes(self) -> list[str]:
        return [c for c in self.attrs.get("class", "").split() if not c.startswith("webcraft-")][:2]


class _TreeBuilder(HTMLParser):
    """The page's elements with the lines they span (never raises: what it
    cannot close is closed where its parent closes)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, 0, None)
        self.open: list[Element] = [self.root]
        self.ids: dict[str, int] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0] - 1
        element = Element(tag, {k: v or "" for k, v in attrs}, line, self.open[-1])
        self.open[-1].children.append(element)
        if element.attrs.get("id"):
            self.ids[element.attrs["id"]] = self.ids.get(element.attrs["id"], 0) + 1
        if tag in _VOID:
            element.end = line
        else:
            self.open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.open.pop().end = self.getpos()[0] - 1

    def handle_endtag(self, tag: str) -> None:
        line = self.getpos()[0] - 1
        for depth in range(len(self.open) - 1, 0, -1):
            if self.open[depth].tag == tag:
                while len(self.open) > depth:
                    self.open.pop().end = line
                return

    def handle_data(self, data: str) -> None:
        for element in self.open[1:]:
            if element.tag in ("h1", "h2", "h3", "h4", "h5", "h6", "title"):
                element.text.append(data)

    def finish(self, last_line: int) -> Element:
        try:
            self.close()
        except Exception:  # html.parser gives up on some broken markup at the very end
            pass
        while len(self.open) > 1:
            self.open.pop().end = last_line
        self.root.end = last_line
        return self.root


def parse_page(text: str) -> tuple[Element, dict[str, int]]:
    """The page's element tree and how often each id occurs."""
    builder = _TreeBuilder()
    try:
        builder.feed(text)
    except Exception:  # never: html.parser is lenient; a page must not break the review
        pass
    return builder.finish(max(len(split_lines(text)) - 1, 0)), builder.ids


def innermost(root: Element, first: int, last: int) -> Element:
    """The smallest element whose lines hold lines ``first``..``last``."""
    found = root
    while True:
        inner = next((c for c in found.children if c.start <= first and c.end >= last), None)
        if inner is None:
            return found
        found = inner


def selector_of(element: Element, ids: Mapping[str, int]) -> str:
    """The viewer's picker's selector for ``element`` (bridge.js selectorOf)."""
    parts: list[str] = []
    node: Element | None = element
    while node is not None and node.tag not in ("#document", "html"):
        node_id = node.attrs.get("id", "")
        if node_id and ids.get(node_id) == 1:
            parts.insert(0, f"#{_css_escape(node_id)}")
            break
        part = node.tag + "".join(f".{_css_escape(c)}" for c in node.classes)
        parent = node.parent
        if parent is not None:
            same = [c for c in parent.children if c.tag == node.tag and set(node.classes) <= set(c.classes)]
            if len(same) > 1:
                of_tag = [c for c in parent.children if c.tag == node.tag]
                part += f":nth-of-type({of_tag.index(node) + 1})"
        parts.insert(0, part)
        if node.tag == "body":
            break
        node = parent
    return " > ".join(parts)


def _css_escape(name: str) -> str:
    escaped = re.sub(r"([^A-Za-z0-9_-])", r"\\\1", name)
    return "\\3" + escaped[0] + " " + escaped[1:] if escaped[:1].isdigit() else escaped


def shown_name(element: Element, ids: Mapping[str, int], selector: str) -> str:
    """How the change list names an element: ``section#pricing``; inside a
    landmark, the landmark (by its id or its heading) and the element
    (``section “Pricing” › p.lead``); else the tail of its selector."""
    if element.tag in ("title", "head"):
        return element.tag
    own = _short(element, ids)
    if element.attrs.get("id"):
        return own
    landmark = element
    while landmark.parent is not None and landmark.tag not in _LANDMARKS:
        landmark = landmark.parent
    if landmark.tag in _LANDMARKS:
        heading = first_heading(landmark) if landmark.tag in _HEADED else None
        named = (_short(landmark, ids) if landmark.attrs.get("id") or not heading
                 else f"{landmark.tag} “{heading}”")
        return named if landmark is element else f"{named} › {own}"
    parts = selector.split(" > ")
    return " > ".join(parts[-3:]) if len(parts) > 3 else selector


def _short(element: Element, ids: Mapping[str, int]) -> str:
    element_id = element.attrs.get("id", "")
    if element_id:
        return f"{element.tag}#{element_id}"
    return element.tag + "".join(f".{c}" for c in element.classes)


def first_heading(element: Element) -> str | None:
    for child in element.children:
        if child.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            text = _SPACE.sub(" ", "".join(child.text)).strip()
            return text[:60] if text else None
        found = first_heading(child)
        if found:
            return found
    return None


def first_title(root: Element) -> str | None:
    stack = [root]
    while stack:
        element = stack.pop(0)
        if element.tag == "title":
            text = _SPACE.sub(" ", "".join(element.text)).strip()
            return text[:60] or None
        stack.extend(element.children)
    return None
