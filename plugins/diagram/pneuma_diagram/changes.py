"""A turn's changes in a diagram's own terms (issue 28, item 1).

Every changed ``.mmd`` file is one change, "Diagram flow.mmd: node B added ·
edge A→B relabelled “yes”", from the nodes and edges mermaid's own parser
finds before and after the turn (graph_parse.py: all of a turn's sources in
one call to the warm Chromium page, within a budget; a Python line scanner
for flowchart and sequence syntax when that cannot answer). Node and edge
detail comes for flowchart, class, state, ER, requirement and sequence
diagrams; other types say their diagram changed. A file that does not parse
after the turn says so with mermaid's line ("changed (does not parse, line
4)"). ``locate`` is the viewer's ``navigate-to``: the file and the first node
added or relabelled.

A diagram is one file that a person reads as a whole, so a change is
reverted as a file (the host's default).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from pneuma.api import Change, ChangeDescriber, FileChange, TurnFiles, text_of
from pneuma_diagram.graph_parse import (
    Graph,
    MermaidUnavailable,
    parse_in_python,
    parse_with_mermaid,
)

log = logging.getLogger(__name__)

SUFFIX = ".mmd"
_SHOWN = 5  # items named in one change; the rest are counted


@dataclass(frozen=True)
class Item:
    """One difference inside a diagram, in both languages."""

    en: str
    zh: str
    node: str | None = None  # a node of the diagram after the turn, to show


def parse_all(sources: list[str]) -> list[Graph]:
    """Every source through mermaid in one call, or through the Python
    scanner when mermaid cannot answer."""
    if not sources:
        return []
    from pneuma_diagram.render import MAX_TEXT_SIZE, limit_in_plain_words

    # mermaid refuses a source over its limits (maxTextSize, maxEdges: the
    # viewer says why it draws none): the scanner reads those, so a big
    # diagram is not called broken
    fits = [i for i, text in enumerate(sources) if len(text) <= MAX_TEXT_SIZE]
    graphs = {i: parse_in_python(text) for i, text in enumerate(sources) if len(text) > MAX_TEXT_SIZE}
    try:
        graphs.update(zip(fits, parse_with_mermaid([sources[i] for i in fits]), strict=True))
    except MermaidUnavailable as exc:
        log.info("describing diagrams without mermaid (%s): the Python scanner reads them", exc)
        graphs.update((i, parse_in_python(sources[i])) for i in fits)
    for i in fits:
        if not graphs[i].ok and limit_in_plain_words(graphs[i].error or ""):
            graphs[i] = parse_in_python(sources[i])
    return [graphs[i] for i in range(len(sources))]


def _quoted(label: str) -> str:
    return f"“{label}”"


def graph_items(before: Graph, after: Graph) -> list[Item]:
    """Nodes and edges added, removed and relabelled, nodes first."""
    items: list[Item] = []
    old_nodes, new_nodes = before.nodes or {}, after.nodes or {}
    for node, label in new_nodes.items():
        if node not in old_nodes:
            items.append(Item(f"node {node} added", f"新增节点 {node}", node))
        elif old_nodes[node] != label:
            items.append(Item(f"node {node} relabelled {_quoted(label)}", f"节点 {node} 改名为{_quoted(label)}", node))
    for node in old_nodes:
        if node not in new_nodes:
            items.append(Item(f"node {node} removed", f"删除节点 {node}"))
    pairs: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    # in the order of the diagram after the turn, then the edges it no longer has
    for side, edges in ((1, after.edges or []), (0, before.edges or [])):
        for edge in edges:
            pairs.setdefault((edge.start, edge.end), ([], []))[side].append(edge.label)
    for (start, end), (old, new) in pairs.items():
        name = f"{start}→{end}"
        for old_label, new_label in zip(old, new, strict=False):
            if old_label != new_label:
                items.append(Item(f"edge {name} relabelled {_quoted(new_label)}" if new_label else f"edge {name} label removed",
                                  f"连线 {name} 标签改为{_quoted(new_label)}" if new_label else f"连线 {name} 去掉标签",
                                  end))
        items.extend(Item(f"edge {name} added", f"新增连线 {name}", end) for _ in new[len(old):])
        items.extend(Item(f"edge {name} removed", f"删除连线 {name}") for _ in old[len(new):])
    return items


def _joined(items: Sequence[Item]) -> dict[str, str]:
    shown = items[:_SHOWN]
    more = len(items) - len(shown)
    en = " · ".join(i.en for i in shown) + (f" · +{more} more" if more else "")
    zh = " · ".join(i.zh for i in shown) + (f" · 另有 {more} 项" if more else "")
    return {"en": en, "zh-CN": zh}


def _not_parsing(graph: Graph, text: str, added: bool) -> tuple[dict[str, str], int | None]:
    """What a diagram that does not parse says: mermaid's line, counted in
    the file (source_lines), and the last line of its message ("Expecting
    'SQE', got 'PS'")."""
    from pneuma_diagram.render import DiagramError
    from pneuma_diagram.source_lines import in_file_lines

    error = in_file_lines(text, DiagramError(graph.error or "", graph.line, None, ""))
    lines = [line.strip() for line in error.message.splitlines() if line.strip()]
    reason = lines[-1] if lines else ""
    reason = reason if len(reason) <= 80 else reason[:79] + "…"
    at_en = f", line {error.line}" if error.line else ""
    at_zh = f"，第 {error.line} 行" if error.line else ""
    word_en, word_zh = ("added", "新增") if added else ("changed", "修改")
    return ({"en": f"{word_en} (does not parse{at_en}: {reason})" if reason else f"{word_en} (does not parse{at_en})",
             "zh-CN": f"{word_zh}（无法解析{at_zh}）"}, error.line)


def _diagram_change(item: FileChange, before_text: str | None, after_text: str | None,
                    before: Graph | None, after: Graph | None) -> Change:
    path = item.path
    where = {"en": f"Diagram {path}", "zh-CN": f"图表 {path}"}
    change_id = f"diagram:{path}"
    if item.status == "deleted":
        return Change(id=change_id, where=where, what={"en": "removed", "zh-CN": "删除"}, kind="removed",
                      files=(path,))
    if after is None or after_text is None:
        return Change(id=change_id, where=where, what={"en": "changed", "zh-CN": "修改"},
                      kind="added" if item.status == "added" else "changed", files=(path,), locate={"file": path})
    if not after.ok:
        what, line = _not_parsing(after, after_text, item.status == "added")
        locate: dict[str, object] = {"file": path, **({"line": line} if line else {})}
        return Change(id=change_id, where=where, what=what,
                      kind="added" if item.status == "added" else "changed", files=(path,), locate=locate)
    if item.status == "added" or before is None or not before.ok:
        count = len(after.nodes) if after.nodes is not None else None
        kind_en = after.diagram_type or "diagram"
        en = f"added ({kind_en}, {count} nodes)" if count is not None else f"added ({kind_en})"
        zh = f"新增（{kind_en}，{count} 个节点）" if count is not None else f"新增（{kind_en}）"
        if item.status != "added":
            en, zh = ("parses again" + en[5:], "恢复可解析" + zh[2:])
        return Change(id=change_id, where=where, what={"en": en, "zh-CN": zh},
                      kind="added" if item.status == "added" else "changed", files=(path,), locate={"file": path})
    items = graph_items(before, after) if after.nodes is not None and before.nodes is not None else []
    if not items:
        what = ({"en": "text or layout changed", "zh-CN": "文字或布局修改"} if after.nodes is not None
                else {"en": f"{after.diagram_type or 'diagram'} changed", "zh-CN": f"{after.diagram_type or '图表'}修改"})
        return Change(id=change_id, where=where, what=what, kind="changed", files=(path,), locate={"file": path})
    node = next((i.node for i in items if i.node and i.node in (after.nodes or {})), None)
    return Change(id=change_id, where=where, what=_joined(items), kind="changed", files=(path,),
                  locate={"file": path, **({"node": node} if node else {})})


def describe(files: TurnFiles) -> Sequence[Change]:
    """One change per changed diagram, in path order; every source parsed
    in one call."""
    wanted = [item for item in files.changed if item.path.endswith(SUFFIX)]
    texts: list[tuple[FileChange, str | None, str | None]] = []
    sources: list[str] = []
    for item in wanted:
        before = text_of(files.before(item.path)) if item.status == "modified" else None
        after = text_of(files.after(item.path)) if item.status != "deleted" else None
        texts.append((item, before, after))
        sources.extend(text for text in (before, after) if text is not None)
    graphs = iter(parse_all(sources))
    changes: list[Change] = []
    for item, before_text, after_text in texts:
        before = next(graphs) if before_text is not None else None
        after = next(graphs) if after_text is not None else None
        changes.append(_diagram_change(item, before_text, after_text, before, after))
    return changes


DESCRIBER = ChangeDescriber(mode="diagram", describe=describe)
