"""``pneuma export --mode diagram --format svg|png|svg-dark|png-dark``: every
diagram of the workspace rendered by mermaid in headless Chromium, one file
per diagram (``architecture.mmd`` → ``architecture.svg``) in the output
directory.

The dark theme is a format of its own (``svg-dark``, ``png-dark``) rather than
an option: an export request carries only a format name (the CLI's
``--format``, the Export menu's item), so a format is the one way the person
can ask for it from both.

A diagram with a syntax error is not exported; the export fails and names
the file, the line and the parser's message, so nothing half-done is
mistaken for the whole set.
"""

from __future__ import annotations

from pathlib import Path

from pneuma.api import ExportError, Exporter, ExportFormat, ExportRequest, ExportResult

from pneuma_diagram.diagrams import SUFFIX, diagram_files
from pneuma_diagram.render import RenderUnavailable, run_mermaid, standalone_svg, svgs_to_png

FORMATS = (
    ExportFormat("svg", {"en": "SVG (one file per diagram)", "zh-CN": "SVG（每个图表一个文件）"}, ""),
    ExportFormat("png", {"en": "PNG (one image per diagram)", "zh-CN": "PNG（每个图表一张图片）"}, ""),
    ExportFormat("svg-dark", {"en": "SVG, dark theme (one file per diagram)",
                              "zh-CN": "SVG，深色主题（每个图表一个文件）"}, ""),
    ExportFormat("png-dark", {"en": "PNG, dark theme (one image per diagram)",
                              "zh-CN": "PNG，深色主题（每个图表一张图片）"}, ""),
)
DARK_SUFFIX = "-dark"


def export_diagrams(workspace: Path, fmt: str, output: Path, theme: str = "light") -> list[Path]:
    """Write every diagram of ``workspace`` as ``fmt`` (``svg`` or ``png``)
    in ``theme`` into the directory ``output``."""
    files = diagram_files(workspace)
    if not files:
        raise ExportError(f"no {SUFFIX} diagrams in {workspace}")
    texts = [(workspace / f).read_text(encoding="utf-8") for f in files]
    try:
        outcomes = run_mermaid(texts, render=True, theme=theme)
        broken = [(f, o.error) for f, o in zip(files, outcomes) if not o.ok]
        if broken:
            file, error = broken[0]
            where = f"{file} line {error.line}" if error and error.line else file
            # mermaid's message: "Parse error on line N:", the source, a caret,
            # then what it expected; the first and last lines say it in one.
            lines = (error.message if error else "mermaid rendered nothing").splitlines()
            said = lines[0] if len(lines) == 1 else f"{lines[0]} {lines[-1]}"
            raise ExportError(f"{where}: {said} ({len(broken)} diagram(s) with errors; nothing exported)")
        svgs = [outcome.svg or "" for outcome in outcomes]
        # every PNG from one Chromium, not one Chromium per diagram
        pngs = svgs_to_png(svgs, theme) if fmt == "png" else []
        output.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        for n, (file, svg) in enumerate(zip(files, svgs)):
            # a/b.mmd → a--b.svg: one flat folder, no two diagrams on one name
            target = output / (file[: -len(SUFFIX)].replace("/", "--") + "." + fmt)
            if fmt == "svg":
                target.write_text(standalone_svg(svg, theme), encoding="utf-8")
            else:
                target.write_bytes(pngs[n])
            written.append(target)
    except RenderUnavailable as exc:
        raise ExportError(f"cannot render diagrams: {exc}", code=exc.code) from None
    return written


def _export(request: ExportRequest) -> ExportResult:
    fmt = request.format
    if fmt.endswith(DARK_SUFFIX):
        fmt, theme = fmt[: -len(DARK_SUFFIX)], "dark"
    else:
        theme = "dark" if str(request.params.get("theme", "")).lower() == "dark" else "light"
    files = export_diagrams(request.workspace, fmt, request.output, theme)
    return ExportResult(files=files, summary=f"{len(files)} diagram(s), {theme} theme")


EXPORTER = Exporter(mode="diagram", formats=FORMATS, export=_export, default_name=lambda ws: "diagrams")
