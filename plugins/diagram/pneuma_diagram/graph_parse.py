"""The nodes and edges of mermaid sources, for describing a turn's changes
(issue 28, item 1).

``parse_with_mermaid`` asks mermaid's own parser, as the viewer's selections
do (static/source-map.js: ``mermaidAPI.getDiagramFromText(text).db``), in
the diagram tools' warm Chromium page (warm.py, render.py): every source of
a turn in one call, within a time budget. The bundle needs a DOM (its
DOMPurify), so Node.js cannot run it. Node and edge detail comes for the
types whose database lists them: flowchart, class, state, ER and
requirement diagrams (``db.getData()``) and sequence diagrams (participants
and messages); any other type parses to its type alone.

``parse_in_python`` is the fallback when Chromium, Playwright or the bundle
is missing or the budget ran out: a line scanner for flowchart and sequence
syntax (the two commonest types), which names the same ids and labels for
the usual statements and says nothing (``nodes is None``) for other types.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from pneuma.api import within

BUDGET_S = 20.0  # the whole call, a browser start included


@dataclass(frozen=True)
class Edge:
    start: str
    end: str
    label: str


@dataclass(frozen=True)
class Graph:
    """One source as parsed: its type, its nodes (id → label) and edges in
    source order (None: the type has no node detail), or the parse error."""

    ok: bool
    diagram_type: str = ""
    nodes: dict[str, str] | None = None
    edges: list[Edge] | None = None
    error: str | None = None
    line: int | None = None  # 1-based, in mermaid's count (source_lines.file_line maps it)


# Runs in the warm mermaid page (render.py's _ONE_PAGE): one call for every source.
_GRAPHS = r"""async (sources) => {
  const mermaid = PneumaMermaid.mermaid;
  const plain = (s) => String(s ?? "").replace(/<br\s*\/?>/gi, " ").replace(/<[^>]*>/g, "")
    .replace(/\s+/g, " ").trim();
  const out = [];
  for (const text of sources) {
    try {
      const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
      const db = diagram.db;
      const type = String(diagram.type || "");
      let nodes = null, edges = null;
      try {
        if (type === "sequence") {
          nodes = [...(db.getActors?.() ?? new Map())].map(([id, a]) => [id, plain(a.description) || id]);
          edges = (db.getMessages?.() ?? []).filter((m) => m.from && m.to)
            .map((m) => [m.from, m.to, plain(m.message)]);
        } else if (db.getData && /^(flowchart|graph|swimlane|class|state|er|requirement)/.test(type)) {
          const data = db.getData();
          const names = new Map();
          if (type === "er") for (const [name, e] of db.getEntities?.() ?? new Map()) names.set(e.id, name);
          // a state diagram's start and end are [*] in its source
          for (const n of data.nodes || []) if (/^state(Start|End)$/.test(String(n.shape))) names.set(n.id, "[*]");
          const nameOf = (id) => names.get(id) ?? String(id);
          nodes = (data.nodes || []).filter((n) => !/^__.*__$/.test(String(n.id)) && names.get(n.id) !== "[*]")
            .map((n) => [nameOf(n.id), plain(n.label) || nameOf(n.id)]);
          edges = (data.edges || []).map((e) => [nameOf(e.start), nameOf(e.end), plain(e.label)]);
        }
      } catch (e) {
        nodes = edges = null;  // a mermaid internal changed shape: the type alone
      }
      out.push({ok: true, type, nodes, edges});
    } catch (e) {
      const hash = (e && e.hash) || {};
      const loc = hash.loc || {};
      out.push({ok: false, message: String((e && e.message) || e),
        line: loc.first_line ?? (hash.line != null ? hash.line + 1 : null)});
    }
  }
  return out;
}"""


class MermaidUnavailable(RuntimeError):
    """mermaid could not answer (no Chromium, no bundle, out of time)."""


def parse_with_mermaid(sources: list[str], budget_s: float = BUDGET_S) -> list[Graph]:
    """Every source parsed by mermaid in one call; raises MermaidUnavailable."""
    if not sources:
        return []
    from pneuma_diagram import render

    if not render.MERMAID_BUNDLE.is_file() or not render._has_playwright():
        raise MermaidUnavailable("no mermaid bundle or no Playwright")
    try:
        binary = render._chromium_binary()
    except render.RenderUnavailable as exc:
        raise MermaidUnavailable(str(exc)) from None
    deadline = time.monotonic() + budget_s

    async def work(renderer: Any) -> list[Any]:
        page_file = renderer.workdir() / "render.html"
        if not page_file.is_file():
            page_file.write_text(render._ONE_PAGE.format(bundle=render.MERMAID_BUNDLE.as_uri(),
                                                         render_one=render._RENDER_ONE), encoding="utf-8")
        page = await render._mermaid_page(renderer, binary, page_file.as_uri(), "default")
        box: list[Any] = []

        async def run() -> None:
            box.append(await page.evaluate(_GRAPHS, sources))

        if not await within(page, max(deadline - time.monotonic(), 0.5), run):
            await renderer.drop(render._MERMAID_PAGE)  # its script never ended: a fresh page next time
            raise MermaidUnavailable(f"mermaid did not finish within {budget_s:g} s")
        return list(box[0])

    try:
        raw = render.RENDERER.call(work)
    except MermaidUnavailable:
        raise
    except Exception as exc:  # Playwright, a dead browser: the Python parse answers instead
        raise MermaidUnavailable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    return [_graph(item) for item in raw]


def _graph(item: dict[str, Any]) -> Graph:
    if not item.get("ok"):
        return Graph(False, error=str(item.get("message") or "does not parse"), line=item.get("line"))
    nodes = item.get("nodes")
    edges = item.get("edges")
    return Graph(True, str(item.get("type") or ""),
                 None if nodes is None else {str(i): str(label) for i, label in nodes},
                 None if edges is None else [Edge(str(a), str(b), str(label)) for a, b, label in edges])


# --- the fallback: flowchart and sequence in Python ------------------------------------------

_COMMENT = re.compile(r"%%.*$")
_HEADER = re.compile(r"^\s*(flowchart|graph|sequenceDiagram)\b", re.M)
_ID = r"[\w\u00c0-\uffff]+(?:[.-][\w\u00c0-\uffff]+)*"  # "A-->B" is A, a link and B
_SHAPES = (r"\(\(\((?P<a>.*?)\)\)\)|\(\((?P<b>.*?)\)\)|\(\[(?P<c>.*?)\]\)|\[\[(?P<d>.*?)\]\]|\[\((?P<e>.*?)\)\]"
           r"|\{\{(?P<f>.*?)\}\}|\[/(?P<g>.*?)[/\\]\]|\[\\(?P<h>.*?)[/\\]\]|\[(?P<i>.*?)\]|\((?P<j>.*?)\)"
           r"|\{(?P<k>.*?)\}|>(?P<l>.*?)\]")
_NODE = re.compile(rf"\s*(?P<id>{_ID})\s*(?:{_SHAPES})?(?::::{_ID})?\s*")
_AMP = re.compile(r"\s*&\s*")
_TEXT_LINK = re.compile(r"\s*<?(?:--|==|-\.)\s*(?P<text>[^-=.>|\s][^>|]*?)\s*(?:-{2,}|={2,}|\.-)[>ox]?\s*")
_LINK = re.compile(r"\s*[<ox]?(?:-{2,}|={2,}|-\.+-|~{3,})[>ox]?(?:\s*\|(?P<pipe>[^|]*)\|)?\s*")
_SUBGRAPH = re.compile(rf"^\s*subgraph\s+(?P<id>{_ID})\s*(?:\[(?P<label>[^\]]*)\])?\s*$")
_SKIP = re.compile(r"^\s*(?:subgraph|end|classDef|class|style|linkStyle|click|direction|accTitle|accDescr)\b")
_SEQ_ACTOR = re.compile(r"^\s*(?:create\s+)?(?:participant|actor)\s+(?P<id>[^\s:]+)(?:\s+as\s+(?P<label>.+))?$")
_SEQ_MESSAGE = re.compile(r"^\s*(?P<a>[^\s:+\-<>][^:]*?)\s*(?:<<-->>|<<->>|-->>|->>|-->|->|--x|-x|--\)|-\))"
                          r"\s*[+-]?\s*(?P<b>[^:]+?)\s*:\s*(?P<text>.*)$")


def parse_in_python(text: str) -> Graph:
    """Flowchart and sequence sources read line by line; other types get
    ``nodes is None``. Never raises."""
    lines = [_COMMENT.sub("", line) for line in text.replace("\r\n", "\n").split("\n")]
    header = next((m for line in lines if (m := _HEADER.match(line))), None)
    if header is None:
        first = next((line.strip() for line in lines if line.strip() and not line.strip().startswith("---")), "")
        return Graph(True, first.split()[0] if first else "")
    if header.group(1) == "sequenceDiagram":
        return _sequence(lines)
    return _flowchart(lines)


def _flowchart(lines: list[str]) -> Graph:
    nodes: dict[str, str] = {}
    edges: list[Edge] = []
    started = False
    for raw in lines:
        for statement in raw.split(";"):
            if not started:
                started = bool(_HEADER.match(statement))
                continue
            if subgraph := _SUBGRAPH.match(statement):  # a group is a node of mermaid's graph too
                nodes.setdefault(subgraph.group("id"), _plain(subgraph.group("label") or subgraph.group("id")))
            if not statement.strip() or _SKIP.match(statement):
                continue
            _flowchart_statement(statement, nodes, edges)
    return Graph(True, "flowchart-v2", nodes, edges)


def _node_group(text: str, at: int, nodes: dict[str, str]) -> tuple[list[str], int]:
    group: list[str] = []
    while True:
        match = _NODE.match(text, at)
        if not match:
            return group, at
        node_id = match.group("id")
        label = next((v for k, v in match.groupdict().items() if k != "id" and v is not None), None)
        if label is not None or node_id not in nodes:
            nodes[node_id] = _plain(label) if label is not None else nodes.get(node_id, node_id)
        group.append(node_id)
        at = match.end()
        amp = _AMP.match(text, at)
        if not amp:
            return group, at
        at = amp.end()


def _flowchart_statement(statement: str, nodes: dict[str, str], edges: list[Edge]) -> None:
    previous, at = _node_group(statement, 0, nodes)
    while previous and at < len(statement):
        link = _TEXT_LINK.match(statement, at) or _LINK.match(statement, at)
        if not link:
            return
        label = _plain(link.groupdict().get("text") or link.groupdict().get("pipe") or "")
        following, at = _node_group(statement, link.end(), nodes)
        edges.extend(Edge(a, b, label) for a in previous for b in following)
        previous = following


def _sequence(lines: list[str]) -> Graph:
    nodes: dict[str, str] = {}
    edges: list[Edge] = []
    for line in lines:
        if actor := _SEQ_ACTOR.match(line):
            nodes.setdefault(actor.group("id"), _plain(actor.group("label") or actor.group("id")))
        elif message := _SEQ_MESSAGE.match(line):
            start, end = message.group("a").strip(), message.group("b").strip()
            nodes.setdefault(start, start)
            nodes.setdefault(end, end)
            edges.append(Edge(start, end, _plain(message.group("text"))))
    return Graph(True, "sequence", nodes, edges)


def _plain(label: str) -> str:
    text = label.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", text)).strip()
