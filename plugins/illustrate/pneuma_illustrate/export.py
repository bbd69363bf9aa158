"""The illustrate mode's exports (`pneuma export`, the Export menu):

- ``zip``: the chosen images with their records: those the person picked;
  when none is picked, those starred (the summary says which); a rejected
  image never, even starred. Files keep their ids (``hero-3f2a.png`` beside
  ``hero-3f2a.json``), in the board's order.
- ``contact-sheet``: one PDF of every row, its title and prompt, each
  image with its id and the person's marks (Picked, Rejected, Starred) and
  comment, printed by Chromium (``pneuma.api.html_to_pdf``). Chinese prompts
  print on a machine without a CJK font through the shell's pinned Noto
  slices.

Workspace files are read through the sandbox; the exported PDF's images are
copies in a private temporary folder, never links into the workspace.
"""

from __future__ import annotations

import html
import tempfile
import zipfile
from pathlib import Path

from pneuma.api import (
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    cjk_font_dir,
    html_to_pdf,
    image_format,
)
from pneuma_illustrate.records import (
    BadFile,
    Board,
    Choice,
    Files,
    record_path,
    slug,
)


def _board(files: Files) -> Board:
    try:
        board = files.board()
    except BadFile as exc:
        raise ExportError(str(exc), hint="Fix board.json (valid JSON with a rows list) and export again") from None
    if not board.image_ids():
        raise ExportError("board.json lists no images yet", hint="Generate some images first")
    return board


def chosen(board: Board, choices: dict[str, Choice]) -> tuple[list[str], str]:
    """The ids to export and which rule chose them ("picked" or "starred")."""
    ids = [i for i in board.image_ids() if i in choices]
    picked = [i for i in ids if choices[i].status == "picked"]
    if picked:
        return picked, "picked"
    starred = [i for i in ids if choices[i].starred and choices[i].status != "rejected"]
    return starred, "starred"


def export_zip(request: ExportRequest) -> ExportResult:
    files = Files(request.workspace)
    board = _board(files)
    ids, rule = chosen(board, files.choices())
    if not ids:
        raise ExportError("no image is picked or starred yet",
                          hint="Pick (or star) the images to export in the page, then export again")
    warnings: list[str] = []
    temp = request.output.with_name(request.output.name + ".partial")
    try:
        with zipfile.ZipFile(temp, "w", compression=zipfile.ZIP_STORED) as archive:
            for done, image_id in enumerate(ids):
                request.report(done, len(ids), image_id)
                found, problem = _picture(files, image_id)
                if found is None:
                    warnings.append(f"{image_id}: {problem}; left out")
                    continue
                rel, data = found
                archive.writestr(rel.rpartition("/")[2], data)
                record = files.read(record_path(image_id))
                if record is not None:
                    archive.writestr(f"{image_id}.json", record)
        count = len(ids) - len(warnings)
        if count == 0:
            raise ExportError(f"none of the chosen images can be exported: {'; '.join(warnings)}",
                              hint="Fix or regenerate those images, or pick others, then export again")
        temp.replace(request.output)
    finally:
        temp.unlink(missing_ok=True)
    how = "picked" if rule == "picked" else "starred (none is picked)"
    return ExportResult(files=[request.output], warnings=warnings,
                        summary=f"{count} {how} image{'s' if count != 1 else ''} with "
                                f"{'their records' if count != 1 else 'its record'}")


_CSS = """
@page { size: A4; margin: 14mm; }
/* The CJK face first: after a generic family Chromium draws Chinese (in italics too) as empty boxes */
body { font: 10pt/1.4 "Pneuma Noto Sans SC", system-ui, "Helvetica Neue", Arial, sans-serif; color: #1d1d1f; }
h1 { font-size: 18pt; margin: 0 0 8mm; }
section { break-inside: avoid-page; margin-bottom: 8mm; }
h2 { font-size: 13pt; margin: 0 0 1mm; }
.prompt { color: #444; margin: 0 0 3mm; }
.grid { display: grid; grid-template-columns: repeat(3, 1fr); gap: 4mm; }
figure { margin: 0; break-inside: avoid; border: 1px solid #ddd; border-radius: 2mm; padding: 2mm; }
figure.picked { border: 2px solid #1a7f37; } figure.rejected { opacity: .55; }
img { width: 100%; aspect-ratio: 1; object-fit: contain; background: #f4f4f4; display: block; }
.missing { aspect-ratio: 1; display: flex; align-items: center; justify-content: center; background: #fee; }
figcaption { margin-top: 1.5mm; font-size: 8.5pt; }
.id { font-family: ui-monospace, monospace; } .marks { font-weight: 600; } .comment { font-style: italic; }
"""


def _picture(files: Files, image_id: str) -> tuple[tuple[str, bytes] | None, str]:
    """An image's file and bytes, or None and why it cannot go into an export."""
    found = files.image_bytes(image_id)
    if found is None:
        return None, "its image file is missing"
    if image_format(found[1]) is None:
        return None, f"{found[0]} is not a PNG, JPEG or WebP image"
    return found, ""


def _figure(files: Files, folder: Path, image_id: str, choice: Choice | None, warnings: list[str]) -> str:
    found, problem = _picture(files, image_id)
    if found is None:
        warnings.append(f"{image_id}: {problem}")
        picture = f'<div class="missing">{html.escape(problem)}</div>'
    else:
        rel, data = found
        copy = folder / rel.rpartition("/")[2]
        copy.write_bytes(data)
        picture = f'<img src="{html.escape(copy.name)}" alt="{html.escape(image_id)}">'
    marks = []
    if choice is not None and choice.status:
        marks.append({"picked": "✓ Picked", "rejected": "✗ Rejected"}[choice.status])
    if choice is not None and choice.starred:
        marks.append("★ Starred")
    comment = choice.comment.strip() if choice is not None else ""
    status = choice.status if choice is not None and choice.status else ""
    caption = f'<span class="id">{html.escape(image_id)}</span>'
    if marks:
        caption += f' <span class="marks">{html.escape(" · ".join(marks))}</span>'
    if comment:
        caption += f'<div class="comment">“{html.escape(comment)}”</div>'
    return f'<figure class="{status}">{picture}<figcaption>{caption}</figcaption></figure>'


def contact_sheet_html(files: Files, board: Board, folder: Path, warnings: list[str]) -> str:
    """The contact sheet's page, its images copied into ``folder``."""
    choices = files.choices()
    font = Path(cjk_font_dir()) / "noto-sans-sc.css"
    link = f'<link rel="stylesheet" href="{font.as_uri()}">' if font.is_file() else ""
    sections = []
    for row in board.rows:
        figures = "".join(_figure(files, folder, i, choices.get(i), warnings) for i in row.images)
        sections.append(f'<section><h2>{html.escape(row.title)}</h2><p class="prompt">{html.escape(row.prompt)}</p>'
                        f'<div class="grid">{figures}</div></section>')
    title = html.escape(board.title or "Contact sheet")
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>{link}'
            f"<style>{_CSS}</style></head><body><h1>{title}</h1>{''.join(sections)}</body></html>")


def export_contact_sheet(request: ExportRequest) -> ExportResult:
    files = Files(request.workspace)
    board = _board(files)
    warnings: list[str] = []
    with tempfile.TemporaryDirectory(prefix="pneuma-contact-") as temp:
        folder = Path(temp)
        page = folder / "contact-sheet.html"
        page.write_text(contact_sheet_html(files, board, folder, warnings), encoding="utf-8")
        request.report(0, 1, "contact sheet")
        html_to_pdf(page, request.output, name="the contact sheet", items=max(1, len(board.rows)))
    count = len(board.image_ids())
    return ExportResult(files=[request.output], warnings=warnings,
                        summary=f"{len(board.rows)} rows, {count} images")


def export(request: ExportRequest) -> ExportResult:
    if request.format == "zip":
        return export_zip(request)
    return export_contact_sheet(request)


def default_name(workspace: Path) -> str:
    try:
        title = Files(workspace).board().title
    except BadFile:
        title = ""
    return slug(title, "illustrate") if title else "illustrate"


EXPORTER = Exporter(
    mode="illustrate",
    formats=[
        ExportFormat("zip", {"en": "Chosen images (ZIP)", "zh-CN": "选中的图片（ZIP）"}, ".zip"),
        ExportFormat("contact-sheet", {"en": "Contact sheet (PDF)", "zh-CN": "联系表（PDF）"}, ".pdf"),
    ],
    export=export,
    default_name=default_name,
)
