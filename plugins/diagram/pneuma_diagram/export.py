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
mistaken for the whole set. A diagram over one of mermaid's limits (more
than 500 arrows, more than 50,000 characters) or that does not finish
within its time budget is left out, said in plain words, and the others are
exported (``ExportResult.left_out``).
"""

from __future__ import annotations

from pathlib import Path

from pneuma.api import (
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    hung_page,
    page_timeout_s,
    timed_out,
)
from pneuma_diagram.diagrams import SUFFIX, diagram_files
from pneuma_diagram.render import (
    RenderUnavailable,
    run_mermaid,
    standalone_svg,
    svgs_to_png,
)
from pneuma_diagram.source_lines import in_file_lines

FORMATS = (
    ExportFormat("svg", {"en": "SVG (one file per diagram)", "zh-CN": "SVG（每个图表一个文件）"}, ""),
    ExportFormat("png", {"en": "PNG (one image per diagram)", "zh-CN": "PNG（每个图表一张图片）"}, ""),
    ExportFormat("svg-dark", {"en": "SVG, dark theme (one file per diagram)",
                              "zh-CN": "SVG，深色主题（每个图表一个文件）"}, ""),
    ExportFormat("png-dark", {"en": "PNG, dark theme (one image per diagram)",
                              "zh-CN": "PNG，深色主题（每个图表一张图片）"}, ""),
)
DARK_SUFFIX = "-dark"


def export_diagrams(workspace: Path, fmt: str, output: Path, theme: str = "light") -> tuple[list[Path], list[str]]:
    """Write every diagram of ``workspace`` as ``fmt`` (``svg`` or ``png``)
    in ``theme`` into the directory ``output``; also one line per diagram
    left out (over one of mermaid's limits, or out of time), the others
    being exported."""
    files = diagram_files(workspace)
    if not files:
        raise ExportError(f"no {SUFFIX} diagrams in {workspace}")
    texts = [(workspace / f).read_text(encoding="utf-8") for f in files]
    try:
        outcomes = run_mermaid(texts, render=True, theme=theme)
        # the line as the file counts it, not as mermaid does (source_lines.py)
        broken = [(f, o.error and in_file_lines(t, o.error))
                  for f, t, o in zip(files, texts, outcomes, strict=True) if not o.ok and not o.left_out]
        if broken:
            file, error = broken[0]
            where = f"{file} line {error.line}" if error and error.line else file
            # mermaid's message: "Parse error on line N:", the source, a caret,
            # then what it expected; the first and last lines say it in one.
            lines = (error.message if error else "mermaid rendered nothing").splitlines()
            said = lines[0] if len(lines) == 1 else f"{lines[0]} {lines[-1]}"
            raise ExportError(f"{where}: {said} ({len(broken)} diagram(s) with errors; nothing exported)")
        left_out = [f"{f}: left out, {o.left_out}" for f, o in zip(files, outcomes) if o.left_out]
        drawn = [(f, o.svg or "") for f, o in zip(files, outcomes) if o.ok]
        # every PNG from one Chromium, not one Chromium per diagram
        pngs = svgs_to_png([svg for _f, svg in drawn], theme) if fmt == "png" else []
        output.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        for n, (file, svg) in enumerate(drawn):
            # a/b.mmd → a--b.svg: one flat folder, no two diagrams on one name
            target = output / (file[: -len(SUFFIX)].replace("/", "--") + "." + fmt)
            if fmt == "svg":
                target.write_text(standalone_svg(svg, theme), encoding="utf-8")
            elif (png := pngs[n]) is not None:
                target.write_bytes(png)
            else:
                left_out.append(hung_page(file, page_timeout_s()))
                continue
            written.append(target)
    except RenderUnavailable as exc:
        raise ExportError(f"cannot render diagrams: {exc}", code=exc.code) from None
    if not written:
        raise _nothing_exported(left_out)
    return written, left_out


def _nothing_exported(left_out: list[str]) -> ExportError:
    """Every diagram left out: ``E_TIMEOUT`` when time ran out, else the
    workspace cannot be exported as it stands (a limit), each named."""
    error = timed_out(left_out)
    if any("did not finish" in line or "were used up" in line for line in left_out):
        return error
    return ExportError(str(error), hint="Split the diagrams into smaller ones, then export again")


def _export(request: ExportRequest) -> ExportResult:
    fmt = request.format
    if fmt.endswith(DARK_SUFFIX):
        fmt, theme = fmt[: -len(DARK_SUFFIX)], "dark"
    else:
        theme = "dark" if str(request.params.get("theme", "")).lower() == "dark" else "light"
    files, left_out = export_diagrams(request.workspace, fmt, request.output, theme)
    summary = f"{len(files)} diagram(s), {theme} theme"
    if left_out:
        summary += f", {len(left_out)} left out"
    return ExportResult(files=files, summary=summary, left_out=left_out)


EXPORTER = Exporter(mode="diagram", formats=FORMATS, export=_export, default_name=lambda ws: "diagrams")
