"""The {{ cookiecutter.name }} mode's exports: what ``pneuma export --mode {{ cookiecutter.name }}``
and the Export menu of a running Pneuma offer (the ``register_exporters``
hook in ``__init__.py`` hands Pneuma ``EXPORTER``).

One format, ``html``: every Markdown page of the workspace in one standalone
HTML file (contents first, then each page), which opens in any browser,
prints, and needs nothing else: no network, no Chromium, no Markdown library.
The Markdown it understands is what the seed page shows (headings,
paragraphs with bold, emphasis, code and links, lists, quotes, fenced code),
as the viewer renders it; replace ``render_page`` when your files are not
Markdown.

Pneuma checks the format and picks the output (``W/exports/<name>.html``
unless ``-o`` says otherwise) before calling ``export``. When the workspace
cannot be exported, raise ``ExportError`` with a message that fits on one
line: ``pneuma export`` prints it as ``pneuma: error: …`` and the Export
menu shows it. Give it ``code="E_UNAVAILABLE"`` when something the export
needs is not installed, ``"E_PREVIEW_FAIL"`` when a renderer failed (see
``register_exporters`` in Pneuma's docs/hooks.md); the default,
``E_CONFLICT``, says the workspace itself is the problem.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from pneuma.api import (
    AGENT_INSTRUCTION_FILES,
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    Sandbox,
    ToolError,
)

# What is not a page: Pneuma's and the agent's own files, and earlier exports.
_SKIPPED_DIRS = {"exports", "node_modules"}
_SKIPPED_FILES = frozenset(AGENT_INSTRUCTION_FILES)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_BULLET = re.compile(r"^ {0,3}[-*+][ \t]+(.*)$")
_NUMBERED = re.compile(r"^ {0,3}\d{1,9}[.)][ \t]+(.*)$")
_QUOTE = re.compile(r"^ {0,3}>[ \t]?(.*)$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
_SAFE_URL = re.compile(r"^(?:https?:|mailto:|#|[^:]*$)", re.IGNORECASE)  # no javascript: links


@dataclass
class Page:
    """One rendered page: its file, its title (first ``#`` heading) and its
    ``##`` headings for the contents, as (anchor, text)."""

    file: str
    anchor: str
    title: str
    sections: list[tuple[str, str]]
    body: str


def pages_of(workspace: Path) -> list[str]:
    """The workspace's Markdown pages, workspace-relative, in path order.

    Each one goes through Pneuma's sandbox, as the tools' paths do: a symlink
    leading out of the workspace, or into ``.git`` or ``.pneuma``, is not read.
    """
    sandbox = Sandbox(workspace)
    found: list[str] = []
    for path in sorted(workspace.rglob("*.md")):
        rel = path.relative_to(workspace)
        if rel.as_posix() in _SKIPPED_FILES or any(
                part.startswith(".") or part in _SKIPPED_DIRS for part in rel.parts[:-1]):
            continue
        try:
            if sandbox.resolve(rel.as_posix()).is_file():
                found.append(rel.as_posix())
        except ToolError:  # refused by the sandbox: not part of what the person sees
            continue
    return found


def export(request: ExportRequest) -> ExportResult:
    files = pages_of(request.workspace)
    if not files:
        raise ExportError(f"{request.workspace} has no Markdown pages to export")
    pages: list[Page] = []
    for rel in files:
        try:
            text = (request.workspace / rel).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ExportError(f"{rel} is not UTF-8 text; save it as UTF-8 and export again") from None
        pages.append(render_page(rel, text))
    title = pages[0].title if len(pages) == 1 else request.workspace.name or pages[0].title
    document = standalone_html(title, pages)
    # Written next to the output, then renamed: a reader never sees half a file.
    partial = request.output.with_name(request.output.name + ".part")
    partial.write_text(document, encoding="utf-8")
    partial.replace(request.output)
    return ExportResult(files=[request.output], summary=f"{len(pages)} page(s)")


# --- Markdown to HTML ---------------------------------------------------------------


def slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.lower()).strip("-") or "section"


def inline(text: str) -> str:
    """Inline Markdown as HTML: code spans, links, bold, emphasis; the rest escaped."""
    out: list[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_emphasis(text[position:match.start()]))
        out.append(f"<code>{html.escape(match.group(2).strip())}</code>")
        position = match.end()
    out.append(_emphasis(text[position:]))
    return "".join(out)


def _emphasis(text: str) -> str:
    def link(match: re.Match[str]) -> str:
        label, url = match.group(1), html.unescape(match.group(2))
        if not _SAFE_URL.match(url):
            return label
        return f'<a href="{html.escape(url)}">{label}</a>'

    escaped = _LINK.sub(link, html.escape(text, quote=False))
    escaped = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: f"<strong>{m.group(1) or m.group(2)}</strong>", escaped)
    return re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?!\w)|(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)",
                  lambda m: f"<em>{m.group(1) or m.group(2)}</em>", escaped)


def _starts_block(line: str) -> bool:
    return bool(_FENCE.match(line) or _HEADING.match(line) or _QUOTE.match(line)
                or _BULLET.match(line) or _NUMBERED.match(line))


def render_page(rel: str, text: str) -> Page:
    """One page as an HTML fragment, its headings given ids under the page's own."""
    anchor = "page-" + slug(rel.removesuffix(".md"))
    lines = text.splitlines()
    blocks: list[str] = []
    used: set[str] = set()
    title = ""
    sections: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif fence := _FENCE.match(line):
            marker = fence.group(1)
            code: list[str] = []
            i += 1
            while i < len(lines) and not (lines[i].strip().startswith(marker[0] * len(marker))
                                          and set(lines[i].strip()) == {marker[0]}):
                code.append(lines[i])
                i += 1
            i += 1  # the closing fence (or the end of the page)
            blocks.append(f"<pre><code>{html.escape(chr(10).join(code))}</code></pre>")
        elif heading := _HEADING.match(line):
            level, words = len(heading.group(1)), (heading.group(2) or "").strip()
            target = f"{anchor}--{slug(words)}"
            while target in used:
                target += "-"
            used.add(target)
            if level == 1 and not title:
                title = re.sub(r"<[^>]+>", "", inline(words))
            elif level == 2:
                sections.append((target, html.unescape(re.sub(r"<[^>]+>", "", inline(words)))))
            blocks.append(f'<h{level} id="{target}">{inline(words)}</h{level}>')
            i += 1
        elif _QUOTE.match(line):
            quoted: list[str] = []
            while i < len(lines) and (match := _QUOTE.match(lines[i])):
                quoted.append(match.group(1))
                i += 1
            blocks.append(f"<blockquote><p>{inline(' '.join(quoted))}</p></blockquote>")
        elif _BULLET.match(line) or _NUMBERED.match(line):
            pattern = _BULLET if _BULLET.match(line) else _NUMBERED
            items: list[str] = []
            while i < len(lines):
                current = lines[i]
                if match := pattern.match(current):
                    items.append(match.group(1).strip())
                elif current.strip() and items and not _starts_block(current):
                    items[-1] += " " + current.strip()  # the item goes on on the next line
                elif not current.strip() and i + 1 < len(lines) and pattern.match(lines[i + 1]):
                    pass  # a blank line between two items of one list
                else:
                    break
                i += 1
            tag = "ul" if pattern is _BULLET else "ol"
            blocks.append(f"<{tag}>" + "".join(f"<li>{inline(item)}</li>" for item in items) + f"</{tag}>")
        else:
            paragraph: list[str] = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
                paragraph.append(lines[i].strip())
                i += 1
            blocks.append(f"<p>{inline(' '.join(paragraph))}</p>")
    return Page(rel, anchor, html.unescape(title) or Path(rel).stem, sections, "\n".join(blocks))


_CSS = """
body { font: 16px/1.6 system-ui, sans-serif; color: #1f2328; max-width: 46rem; margin: 2rem auto;
  padding: 0 1rem; }
h1, h2, h3 { line-height: 1.25; } a { color: #0969da; }
pre { background: #f6f8fa; padding: .8em 1em; border-radius: 6px; overflow-x: auto; }
:not(pre) > code { background: #eff1f3; padding: .1em .35em; border-radius: 4px; }
blockquote { margin: 0; padding: 0 1em; color: #59636e; border-left: .25em solid #d0d7de; }
.file { color: #59636e; font-size: .8rem; margin: 2.5rem 0 0; }
nav ol { padding-left: 1.2em; }
@media print { article { break-before: page; } .file { margin-top: 0; } }
"""


def standalone_html(title: str, pages: list[Page]) -> str:
    contents = "".join(
        f'<li><a href="#{page.anchor}">{html.escape(page.title)}</a>'
        + ("<ol>" + "".join(f'<li><a href="#{target}">{html.escape(text)}</a></li>'
                            for target, text in page.sections) + "</ol>" if page.sections else "")
        + "</li>"
        for page in pages)
    articles = "\n".join(
        f'<article id="{page.anchor}" data-file="{html.escape(page.file)}">'
        f'<p class="file">{html.escape(page.file)}</p>\n{page.body}\n</article>'
        for page in pages)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="Pneuma {{ cookiecutter.name }} export">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f'<nav aria-label="Contents"><h2>Contents</h2><ol>{contents}</ol></nav>\n'
        f"{articles}\n</body>\n</html>\n")


EXPORTER = Exporter(
    mode="{{ cookiecutter.name }}",
    formats=[
        # name: what --format takes; label: the Export menu's item; suffix: the file's extension
        ExportFormat("html", {"en": "HTML (every page in one file)", "zh-CN": "HTML（所有页面合为一个文件）"},
                     ".html"),
    ],
    export=export,
    # The output's name when none is given: W/exports/<workspace's folder name>.html
    default_name=lambda workspace: workspace.name or "{{ cookiecutter.name }}",
)
