"""The doc mode's ``Exporter`` (``register_exporters``): every Markdown
document of the workspace as one standalone HTML file, or as a PDF printed
from it — a table of contents first, then each document from a new page.

The documents are rendered by the doc viewer's own renderer
(static/markdown.js, through static/export-render.js) in Node.js when it is
there, else in headless Chromium (the PDF: in the Chromium that prints it;
docs/doc.md), so the export shows what the viewer shows: the same markdown-it and
configuration, task lists as checkboxes, bare https:// addresses as links,
code highlighted by the same highlight.js, and the viewer's stylesheet.

The workspace's README.md comes first, the others in path order; CLAUDE.md and AGENTS.md
(the agent's instructions), hidden folders, ``node_modules`` and
``exports/`` are left out. Images are inlined as data: URLs (only files
inside the workspace), links between documents and to headings become links
inside the file, and every heading gets an id the table of contents points to.
"""

from __future__ import annotations

import base64
import html
import mimetypes
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.api import (
    AGENT_INSTRUCTION_FILES,
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    ScriptPage,
    run_script,
    run_script_then_pdf,
    shell_static_dir,
)

_SKIPPED_DIRS = {"node_modules", "exports"}
_SKIPPED_FILES = frozenset(AGENT_INSTRUCTION_FILES)  # the agent's, not documents


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


STATIC_DIR = Path(__file__).resolve().parent / "static"
_RENDER_MODULE = STATIC_DIR / "export-render.js"
_VENDOR = STATIC_DIR / "vendor" / "doc-vendor.js"
_IMAGE = re.compile(r'src="pneuma-export-image:([^"]*)"')


def _renderer() -> ScriptPage:
    """The viewer's own renderer (static/export-render.js, which imports
    static/markdown.js and the shell's /static/lib/markdown-it.js), as a page
    of the exporter's own: in Node.js when it is there, else in headless
    Chromium."""
    shell = shell_static_dir()
    return ScriptPage(folders={"/static/lib/": shell / "lib", "/static/vendor/": shell / "vendor",
                               "/doc/": STATIC_DIR},
                      module="/doc/" + _RENDER_MODULE.name, function="renderDocuments",
                      # markdown-it, highlight.js and markdown.js touch no page: Node can run them
                      needs_no_dom=True)


def _renderer_files() -> list[Path]:
    shell = shell_static_dir()
    return [_RENDER_MODULE, _VENDOR, shell / "lib" / "markdown-it.js", shell / "vendor" / "markdown-it.min.js"]


def _check_renderer() -> None:
    missing = [path for path in _renderer_files() if not path.is_file()]
    if missing:
        raise ExportError(f"the doc renderer is not built ({missing[0].name} is missing)", code="E_UNAVAILABLE",
                          hint="run scripts/install (or `npm ci && npm run build` in plugins/doc/web/)")


def _sources(workspace: Path, files: list[Path]) -> list[dict[str, str]]:
    return [{"path": p.relative_to(workspace).as_posix(),
             "text": p.read_text(encoding="utf-8", errors="replace")} for p in files]


class _Images:
    """The documents' images, put into the page as data: URLs (files inside
    the workspace only)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
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

    def inline(self, body: str) -> str:
        def put_in(match: re.Match[str]) -> str:
            rel = urllib.parse.unquote(html.unescape(match.group(1)))
            data = self._data_url(rel)
            return f'src="{data}"' if data else f'src="{html.escape(rel)}"'

        return _IMAGE.sub(put_in, body)


def _documents_of(answer: Any, images: _Images) -> list[Document]:
    """The renderer's answer as documents, their images inlined."""
    if not isinstance(answer, list):
        raise ExportError("the doc renderer gave no documents", code="E_PREVIEW_FAIL")
    documents = []
    for item in answer:
        headings = [Heading(int(h["level"]), str(h["text"]), str(h["id"])) for h in item["headings"]]
        documents.append(Document(item["path"], item["anchor"], item["title"], images.inline(item["html"]),
                                  headings))
    return documents


def render_documents(workspace: Path, files: list[Path], *, raw_html: bool = False) -> tuple[list[Document], set[str]]:
    """The documents rendered as the doc viewer renders them, their links
    and headings made to work inside one page, their images inlined; and
    the images they name that do not exist."""
    _check_renderer()
    answer = run_script(_renderer(), {"documents": _sources(workspace, files), "rawHtml": raw_html},
                        name="the documents", items=len(files))
    images = _Images(workspace)
    return _documents_of(answer, images), images.missing


# The page around the documents. The documents themselves are styled by the
# viewer's stylesheet (static/viewer.css: its .markdown-body rules and the
# highlight.js palette, light and dark), put in whole; the body is the
# viewer's .pd-root for its colours and fonts, laid out as a plain page.
_PAGE_CSS = """
body.pd-root.pd-export { display: block; height: auto; max-width: 46rem; margin: 0 auto;
  padding: 2rem 1.25rem; container-type: normal; font-size: 16px; }
.pd-export .pd-doc { max-width: none; padding: 0; margin: 0 0 3rem; }
.pd-export nav.toc { margin-bottom: 3rem; line-height: 1.5; }
.pd-export nav.toc h1 { font-size: 2em; margin: 0 0 .5em; }
.pd-export nav.toc h2 { font-size: 1.5em; padding-bottom: .3em; border-bottom: 1px solid var(--pd-border-soft); }
.pd-export nav.toc a { color: var(--pd-accent); text-decoration: none; }
.pd-export nav.toc ol { padding-left: 1.2em; } .pd-export nav.toc li { margin: .2em 0; }
.pd-export nav.toc .doc { font-weight: 600; margin-top: .6em; }
.pd-export nav.toc .doc li { font-weight: 400; }
.pd-export .doc-file { color: var(--pd-muted); font-size: .8rem; margin: 0 0 .5rem; }
@page { size: A4; margin: 18mm 16mm; }
@media print {
  body.pd-root.pd-export { max-width: none; margin: 0; padding: 0; font-size: 11pt; }
  article, nav.toc { break-after: page; }
  article:last-child { break-after: auto; }
  h1, h2, h3 { break-after: avoid; } pre, table, img, blockquote { break-inside: avoid; }
  .pd-anchor { display: none; }
  .pd-export a, .pd-export nav.toc a { color: inherit; text-decoration: none; }
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


def page_of(documents: list[Document]) -> str:
    """The export's page: the contents, then each document as an article."""
    title = documents[0].title
    articles = "\n".join(
        f'<article id="{doc.anchor}" data-file="{html.escape(doc.rel)}" class="markdown-body pd-doc">'
        f'<p class="doc-file">{html.escape(doc.rel)}</p>{doc.body}</article>'
        for doc in documents)
    viewer_css = (STATIC_DIR / "viewer.css").read_text(encoding="utf-8")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="Pneuma doc export">'
        f"<title>{html.escape(title)}</title><style>{viewer_css}{_PAGE_CSS}</style></head>\n"
        f'<body class="pd-root pd-export">{_toc(documents, title)}\n{articles}\n</body></html>\n')


def _files_to_export(workspace: Path) -> list[Path]:
    files = documents_of(workspace)
    if not files:
        raise ExportError(f"{workspace} has no Markdown documents to export")
    return files


def render_html(workspace: Path, *, raw_html: bool = False) -> tuple[str, list[Document], set[str]]:
    """The export's page; ``raw_html`` keeps the documents' own HTML (and
    scripts) instead of showing it as text."""
    documents, missing = render_documents(workspace, _files_to_export(workspace), raw_html=raw_html)
    return page_of(documents), documents, missing


def print_pdf(workspace: Path, output: Path) -> tuple[list[Document], set[str]]:
    """The export's page printed to ``output``: rendered and printed in one
    Chromium (``run_script_then_pdf``)."""
    files = _files_to_export(workspace)
    _check_renderer()
    images = _Images(workspace)
    documents: list[Document] = []

    def to_page(answer: Any) -> str:
        documents.extend(_documents_of(answer, images))
        return page_of(documents)

    run_script_then_pdf(_renderer(), {"documents": _sources(workspace, files), "rawHtml": False}, to_page,
                        output, name="the documents", items=len(files))
    return documents, images.missing


def export(request: ExportRequest) -> ExportResult:
    if request.format in ("html", RAW_HTML):
        page, documents, missing = render_html(request.workspace, raw_html=request.format == RAW_HTML)
        tmp = request.output.with_name(request.output.name + ".tmp")
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(request.output)
    else:
        documents, missing = print_pdf(request.workspace, request.output)
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
