"""The doc mode's ``Exporter`` (``register_exporters``): every Markdown
document of the workspace as one standalone HTML file, or as a PDF printed
from it — a table of contents first, then each document from a new page.

The workspace's README.md comes first, the others in path order; CLAUDE.md and AGENTS.md
(the agent's instructions), hidden folders, ``node_modules`` and
``exports/`` are left out. Images are inlined as data: URLs (only files
inside the workspace), links between documents become links inside the
file, and every heading gets an id the table of contents points to.
"""

from __future__ import annotations

import base64
import html
import mimetypes
import posixpath
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from pneuma.api import (
    AGENT_INSTRUCTION_FILES,
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    html_to_pdf,
)

_SKIPPED_DIRS = {"node_modules", "exports"}
_SKIPPED_FILES = frozenset(AGENT_INSTRUCTION_FILES)  # the agent's, not documents
_EXTERNAL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//|#)")


@dataclass
class Heading:
    level: int
    text: str
    anchor: str


@dataclass
class Document:
    rel: str
    anchor: str
    title: str
    body: str
    headings: list[Heading]


def documents_of(workspace: Path) -> list[Path]:
    """The workspace's Markdown documents, README.md first, then by path."""
    found = []
    for path in workspace.rglob("*.md"):
        rel = path.relative_to(workspace)
        if any(part.startswith(".") or part in _SKIPPED_DIRS for part in rel.parts[:-1]):
            continue
        if rel.as_posix() in _SKIPPED_FILES or not path.is_file():
            continue
        found.append(rel)
    found.sort(key=lambda rel: (rel.as_posix().lower() != "readme.md", rel.as_posix().lower()))
    return [workspace / rel for rel in found]


def _slug(text: str) -> str:
    return re.sub(r"[^\w\u00c0-\uffff]+", "-", text.lower()).strip("-") or "section"


def _file_anchor(rel: str) -> str:
    return "doc-" + _slug(rel.removesuffix(".md"))


class _Renderer:
    def __init__(self, workspace: Path, *, raw_html: bool = False) -> None:
        self.workspace = workspace
        # html False: raw HTML is text, as in the doc viewer (static/viewer.js, createRenderer)
        self.md = MarkdownIt("commonmark", {"html": raw_html}).enable(["table", "strikethrough"])
        self.missing: set[str] = set()

    def _data_url(self, rel: str) -> str | None:
        path = self.workspace / rel
        try:
            inside = path.resolve().is_relative_to(self.workspace)
        except OSError:
            inside = False
        if not inside or not path.is_file():
            self.missing.add(rel)
            return None
        mime = "image/svg+xml" if path.suffix.lower() == ".svg" else (
            mimetypes.guess_type(path.name)[0] or "application/octet-stream")
        return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"

    def render(self, rel: str) -> Document:
        text = (self.workspace / rel).read_text(encoding="utf-8", errors="replace")
        tokens = self.md.parse(text)
        base = posixpath.dirname(rel)
        file_anchor = _file_anchor(rel)
        headings: list[Heading] = []
        used: set[str] = set()
        for i, token in enumerate(tokens):
            if token.type == "heading_open":
                title = tokens[i + 1].content if i + 1 < len(tokens) else ""
                anchor = f"{file_anchor}--{_slug(title)}"
                n = 2
                while anchor in used:
                    anchor, n = f"{file_anchor}--{_slug(title)}-{n}", n + 1
                used.add(anchor)
                token.attrSet("id", anchor)
                headings.append(Heading(int(token.tag[1]), title, anchor))
            for child in token.children or []:
                self._rewrite(child, base)
        body = self.md.renderer.render(tokens, self.md.options, {})
        title = next((h.text for h in headings if h.level == 1), None) or Path(rel).stem
        return Document(rel, file_anchor, title, body, headings)

    def _rewrite(self, token: Any, base: str) -> None:
        """Images inlined; a link to another document becomes a link to its section."""
        attr = "src" if token.type == "image" else "href" if token.type == "link_open" else None
        if attr is None:
            return
        url = str(token.attrGet(attr) or "")
        if not url or _EXTERNAL.match(url):
            return
        path, _, fragment = url.partition("#")
        rel = posixpath.normpath(posixpath.join(base, path.split("?", 1)[0].lstrip("/")))
        if rel.startswith(".."):
            return
        if token.type == "image":
            data = self._data_url(rel)
            if data:
                token.attrSet("src", data)
        elif rel.endswith(".md"):
            anchor = _file_anchor(rel)
            token.attrSet("href", f"#{anchor}--{_slug(fragment)}" if fragment else f"#{anchor}")


_CSS = """
:root { color-scheme: light; }
body { font: 16px/1.6 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC",
  sans-serif; color: #1f2328; max-width: 46rem; margin: 2rem auto; padding: 0 1.25rem; }
h1, h2, h3 { line-height: 1.25; } h1 { font-size: 2rem; } h2 { border-bottom: 1px solid #d8dee4;
  padding-bottom: .3em; }
a { color: #0969da; } img { max-width: 100%; }
pre, code { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .9em; }
pre { background: #f6f8fa; padding: 1em; overflow: auto; border-radius: 6px; }
:not(pre) > code { background: #eff1f3; padding: .15em .35em; border-radius: 4px; }
table { border-collapse: collapse; } th, td { border: 1px solid #d0d7de; padding: .35em .7em; }
blockquote { margin: 0; padding: 0 1em; color: #59636e; border-left: .25em solid #d0d7de; }
nav.toc ol { padding-left: 1.2em; } nav.toc li { margin: .2em 0; }
nav.toc .doc { font-weight: 600; margin-top: .6em; }
.doc-file { color: #59636e; font-size: .8rem; margin: 0; }
@page { size: A4; margin: 18mm 16mm; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 11pt; }
  article, nav.toc { break-after: page; }
  article:last-child { break-after: auto; }
  h1, h2, h3 { break-after: avoid; } pre, table, img, blockquote { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
}
"""


def _toc(documents: list[Document], title: str) -> str:
    items = []
    for doc in documents:
        sub = "".join(
            f'<li><a href="#{h.anchor}">{html.escape(h.text)}</a></li>'
            for h in doc.headings if h.level == 2)
        items.append(f'<li class="doc"><a href="#{doc.anchor}">{html.escape(doc.title)}</a>'
                     + (f"<ol>{sub}</ol>" if sub else "") + "</li>")
    return (f'<nav class="toc" aria-label="Contents"><h1>{html.escape(title)}</h1>'
            f"<h2>Contents</h2><ol>{''.join(items)}</ol></nav>")


def render_html(workspace: Path, *, raw_html: bool = False) -> tuple[str, list[Document], set[str]]:
    """The export's page; ``raw_html`` keeps the documents' own HTML (and
    scripts) instead of showing it as text."""
    files = documents_of(workspace)
    if not files:
        raise ExportError(f"{workspace} has no Markdown documents to export")
    renderer = _Renderer(workspace, raw_html=raw_html)
    documents = [renderer.render(p.relative_to(workspace).as_posix()) for p in files]
    title = documents[0].title
    articles = "\n".join(
        f'<article id="{doc.anchor}" data-file="{html.escape(doc.rel)}">'
        f'<p class="doc-file">{html.escape(doc.rel)}</p>{doc.body}</article>'
        for doc in documents)
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="Pneuma doc export">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>"
        f"{_toc(documents, title)}\n{articles}\n</body></html>\n")
    return page, documents, renderer.missing


def export(request: ExportRequest) -> ExportResult:
    page, documents, missing = render_html(request.workspace, raw_html=request.format == RAW_HTML)
    if request.format in ("html", RAW_HTML):
        tmp = request.output.with_name(request.output.name + ".tmp")
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(request.output)
    else:
        with tempfile.TemporaryDirectory(prefix="pneuma-doc-export-") as tmp_dir:
            source = Path(tmp_dir) / "document.html"
            source.write_text(page, encoding="utf-8")
            html_to_pdf(source, request.output, name="the documents", items=len(documents))
    warnings = [f"{rel} is referenced by a document but does not exist" for rel in sorted(missing)]
    return ExportResult([request.output], warnings, f"{len(documents)} document(s)")


def _default_name(workspace: Path) -> str:
    return workspace.name or "documents"


RAW_HTML = "html-raw"


EXPORTER = Exporter(
    mode="doc",
    formats=[
        ExportFormat("pdf", {"en": "PDF (print-styled, with contents)", "zh-CN": "PDF（打印排版，含目录）"},
                     ".pdf"),
        ExportFormat("html", {"en": "HTML (one standalone file)", "zh-CN": "HTML（单个独立文件）"}, ".html"),
        ExportFormat(RAW_HTML, {"en": "HTML keeping raw HTML and scripts (they run when opened)",
                                "zh-CN": "HTML，保留原始 HTML 与脚本（打开时会运行）"}, ".html"),
    ],
    export=export,
    default_name=_default_name,
)
