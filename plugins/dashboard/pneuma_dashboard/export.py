"""``pneuma export --mode dashboard --format png|pdf|html``: the whole board
as the viewer lays it out.

The board is drawn by the viewer's own tile drawers and stylesheet
(static/export-board.js over tiles.js, board.js, viewer.css and the vega
bundle) in headless Chromium at a fixed width, through ``pneuma.api``'s
``ScriptPage``: what the person sees is what the export holds. The answer
(the board's markup with each chart as the SVG vega drew, its size, each
chart's spec with its rows) becomes:

- ``png``: one image of the board, at its size;
- ``pdf``: one page the size of the board, its text selectable;
- ``html``: one file that draws the board with the network off: the vega
  bundle, the stylesheets and every chart's rows inlined; the charts are
  drawn again by vega when the file opens (tooltips work), tables,
  numbers and notes are the exported markup.

The last drawing is kept (one board, by its files and the viewer's): a
second format of an unchanged board starts Chromium only to print or
capture it, and the standalone HTML none at all.

A tile that cannot be drawn (a bad spec, a missing data file) shows its
error in its place, as in the viewer, and is named in ``left_out``; a board
file that is not JSON exports nothing (``E_PARSE_FAIL``, with its line).
"""

from __future__ import annotations

import hashlib
import html
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pneuma.api import (
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    Sandbox,
    ScriptPage,
    ToolError,
    html_to_pdf,
    html_to_png,
    run_script,
    run_script_then_pdf,
    shell_static_dir,
)
from pneuma_dashboard.board import BOARD_FILE, read_board
from pneuma_dashboard.data import max_data_bytes, megabytes

STATIC = Path(__file__).resolve().parent / "static"
VENDOR_JS = STATIC / "vendor" / "vega.iife.js"
WIDTH_PX = 1280  # the board's width in an export (a laptop's page, the grid's 12 columns of ~100 px)

FORMATS = (
    ExportFormat("png", {"en": "PNG image of the board", "zh-CN": "看板 PNG 图片"}, ".png"),
    ExportFormat("pdf", {"en": "PDF of the board (one page)", "zh-CN": "看板 PDF（单页）"}, ".pdf"),
    ExportFormat("html", {"en": "Standalone HTML (works offline)", "zh-CN": "独立 HTML（可离线查看）"}, ".html"),
)

# The page printed or captured: the board at its own size, nothing around it.
_EXPORT_CSS = """
html, body { margin: 0; background: #fff; }
.pneuma-dashboard.db-export { position: static; overflow: visible; }
.pneuma-dashboard.db-export .db-table-wrap, .pneuma-dashboard.db-export .db-markdown { overflow: hidden; }
"""

# Draws each chart of the standalone file from its inlined spec and rows.
_DRAW_SCRIPT = """(function () {
  var vendor = window.PneumaVega;
  var charts = JSON.parse(document.getElementById("dbx-charts").textContent);
  charts.forEach(function (chart, i) {
    var holder = document.querySelector('[data-dbx-chart="' + i + '"]');
    if (!holder || !vendor) return;
    vendor.vegaEmbed(holder, chart.spec, {renderer: "svg", actions: false, ast: true,
                                          expr: vendor.expressionInterpreter})
      .catch(function (e) { holder.textContent = String((e && e.message) || e); });
  });
})();"""


def _script() -> ScriptPage:
    shell = shell_static_dir()
    return ScriptPage(folders={"/static/lib/": shell / "lib", "/static/vendor/": shell / "vendor",
                               "/dashboard/": STATIC},
                      module="/dashboard/export-board.js", function="renderBoard")


def board_job(workspace: Path) -> dict[str, Any]:
    """What the page draws: the board file's text and every data file a
    tile names (read through the sandbox, within the data size limit)."""
    sandbox = Sandbox(workspace)
    try:
        data, _info = sandbox.read_bytes(BOARD_FILE, 4 * 1024 * 1024)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise ExportError(f"{workspace} has no {BOARD_FILE}: there is no board to export", code="E_NOT_FOUND") from None
    text = data.decode("utf-8", errors="replace")
    board = read_board(text)
    unreadable = [p for p in board.problems if p.path == "" and not board.tiles]
    if unreadable:
        raise ExportError(str(unreadable[0]), code="E_PARSE_FAIL",
                          hint=f"Fix {BOARD_FILE} (validate_board names the spot), then export again")
    files: dict[str, str] = {}
    errors: dict[str, str] = {}
    limit = max_data_bytes()
    for path in dict.fromkeys(t.data for t in board.tiles if t.data):
        try:
            raw, info = sandbox.read_bytes(path, limit)
        except OSError:
            continue  # the tile says its file is missing, as in the viewer
        except ToolError as exc:
            errors[path] = str(exc)
            continue
        if len(raw) > limit:
            errors[path] = f"{path} is {megabytes(info.st_size)}; the dashboard reads data files up to {megabytes(limit)}"
        else:
            files[path] = raw.decode("utf-8", errors="replace")
    return {"board": text, "files": files, "errors": errors, "width": WIDTH_PX}


# The board as last drawn, by what was drawn (the job and the viewer's own
# files): the Export menu's formats one after another over the same board
# (PNG, then PDF, then HTML) start Chromium to draw it once, not each time.
_last_drawn: tuple[str, dict[str, Any]] | None = None


def _drawn_key(job: dict[str, Any]) -> str:
    viewer = sorted((str(p.relative_to(STATIC)), p.stat().st_mtime_ns) for p in STATIC.rglob("*") if p.is_file())
    return hashlib.sha256(json.dumps([job, viewer], sort_keys=True).encode()).hexdigest()


def _remembered(key: str) -> dict[str, Any] | None:
    last = _last_drawn
    return last[1] if last is not None and last[0] == key else None


def _remember(key: str, answer: dict[str, Any]) -> None:
    global _last_drawn
    _last_drawn = (key, answer)


def _checked(answer: Any) -> dict[str, Any]:
    if not isinstance(answer, dict) or "html" not in answer:
        error = answer.get("error") if isinstance(answer, dict) else None
        message = error.get("message") if isinstance(error, dict) else "the board could not be drawn"
        raise ExportError(str(message), code="E_PARSE_FAIL")
    return answer


def _style(answer: dict[str, Any]) -> str:
    return (STATIC / "viewer.css").read_text(encoding="utf-8") + "\n" + str(answer.get("css", "")) + _EXPORT_CSS


def static_page(answer: dict[str, Any]) -> str:
    """The drawn board as a page with no script: what is printed and captured."""
    width, height = int(answer["width"]), int(answer["height"])
    return (f'<!doctype html><html><head><meta charset="utf-8"><style>{_style(answer)}\n'
            f"@page {{ size: {width}px {height}px; margin: 0; }}</style></head>"
            f"<body>{answer['html']}</body></html>")


def _inline_json(value: Any) -> str:
    # "</script>" in a string would end the script early; \\u003c is the same JSON
    return json.dumps(value).replace("<", "\\u003c")


def standalone_page(answer: dict[str, Any], title: str) -> str:
    """One file that draws the board offline: the bundle, the styles and
    the charts' rows inlined."""
    vendor = VENDOR_JS.read_text(encoding="utf-8").replace("</script", "<\\/script")
    return (f'<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><title>{html.escape(title)}</title>'
            f"<style>{_style(answer)}</style></head><body>{answer['live_html']}"
            f"<script>{vendor}</script>"
            f'<script type="application/json" id="dbx-charts">{_inline_json(answer["charts"])}</script>'
            f"<script>{_DRAW_SCRIPT}</script></body></html>")


def _left_out(answer: dict[str, Any]) -> list[str]:
    return [f"tile “{t['title']}” ({t['id']}): drawn as its error: {t['error']}"
            for t in answer.get("tiles", []) if t.get("error")]


@contextmanager
def _static_file(answer: dict[str, Any]) -> Iterator[Path]:
    """The drawn board's static page as a file, for Chromium to print or capture."""
    with tempfile.TemporaryDirectory(prefix="pneuma-dashboard-") as tmp:
        page = Path(tmp) / "board.html"
        page.write_text(static_page(answer), encoding="utf-8")
        yield page


def export_board(request: ExportRequest) -> ExportResult:
    if not VENDOR_JS.is_file():
        raise ExportError("the dashboard's vega bundle is missing", code="E_UNAVAILABLE",
                          hint="Run scripts/build-web, then export again")
    job = board_job(request.workspace)
    title = read_board(job["board"]).title or "Dashboard"
    output = request.output
    key = _drawn_key(job)
    drawn = _remembered(key)
    request.report(0, 2, "drawing the board" if drawn is None else "the board as last drawn")
    if request.format == "pdf":
        answer = drawn or _checked(run_script_then_pdf(_script(), job, lambda a: static_page(_checked(a)), output,
                                                       name="the board"))
        if drawn is not None:
            with _static_file(answer) as page:
                html_to_pdf(page, output, name="the board")
    else:
        answer = drawn or _checked(run_script(_script(), job, name="the board"))
        if request.format == "png":
            request.report(1, 2, "capturing the board")
            with _static_file(answer) as page:
                if html_to_png([page], [output], width=int(answer["width"]), height=int(answer["height"]),
                               names=["the board"]):
                    raise ExportError("the board did not finish drawing in time", code="E_TIMEOUT")
        elif request.format == "html":
            output.write_text(standalone_page(answer, title), encoding="utf-8")
        else:
            raise ExportError(f"unknown format {request.format}", code="E_BAD_ARGS")
    _remember(key, answer)
    request.report(2, 2, "done")
    tiles = len(answer.get("tiles", []))
    return ExportResult(files=[output], summary=f"{tiles} tiles, {answer['width']}×{answer['height']} px",
                        left_out=_left_out(answer))


EXPORTER = Exporter(mode="dashboard", formats=FORMATS, export=export_board,
                    default_name=lambda ws: "dashboard", site_format="html")
