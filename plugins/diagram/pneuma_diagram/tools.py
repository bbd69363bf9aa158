"""The diagram mode's agent tools: ``validate_diagram`` and ``render_diagram``.

Both run the real mermaid parser and renderer in headless Chromium
(render.py), so what they accept is exactly what the viewer draws. Paths go
through the workspace sandbox; outputs are written by fd inside it.
"""

from __future__ import annotations

import posixpath
from typing import Any

from pneuma.api import ToolContext, ToolError, read_text, write_in_workspace
from pneuma_diagram.diagrams import SUFFIX, diagram_files
from pneuma_diagram.render import (
    RenderUnavailable,
    run_mermaid,
    standalone_svg,
    svg_size,
    svg_to_png,
)
from pneuma_diagram.source_lines import in_file_lines

FORMATS = ("svg", "png")


def _check_source(path: str) -> None:
    if not path.endswith(SUFFIX):
        raise ToolError("E_BAD_ARGS", f"{path} is not a Mermaid file ({SUFFIX})",
                        hint="Diagrams live in *.mmd files, one diagram per file")


def _mermaid(sources: list[str], *, render: bool, theme: str = "light"):
    try:
        return run_mermaid(sources, render=render, theme=theme)
    except RenderUnavailable as exc:
        raise ToolError(exc.code, f"Cannot run mermaid: {exc}",
                        hint="Check that Chromium is installed and scripts/build-web has run") from None


def validate_diagram(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Parse one diagram (``file``) or every ``*.mmd`` file with mermaid."""
    if args.get("file"):
        files = [ctx.sandbox.normalize(args["file"])]
        _check_source(files[0])
    else:
        files = diagram_files(ctx.workspace)
    texts = [read_text(ctx, f)[0] for f in files]
    results = []
    for file, text, outcome in zip(files, texts, _mermaid(texts, render=False), strict=True):
        entry: dict[str, Any] = {"file": file, "valid": outcome.ok, "type": outcome.diagram_type, "errors": []}
        if outcome.error:
            # mermaid counts lines after front matter and comments: said as the file's lines
            entry["errors"].append(in_file_lines(text, outcome.error).as_dict())
        results.append(entry)
    return {"valid": all(r["valid"] for r in results), "diagrams": results}


def render_diagram(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Render one diagram to an SVG or PNG file inside the workspace."""
    file = ctx.sandbox.normalize(args["file"])
    _check_source(file)
    fmt = args.get("format", "svg")
    theme = args.get("theme", "light")
    output = args.get("output") or posixpath.join("exports", posixpath.basename(file)[: -len(SUFFIX)] + "." + fmt)
    output = ctx.sandbox.normalize(output)
    if not output.endswith("." + fmt):
        raise ToolError("E_BAD_ARGS", f"output {output} does not end in .{fmt}", hint=f"Name the file *.{fmt}")
    text, _ = read_text(ctx, file)
    outcome = _mermaid([text], render=True, theme=theme)[0]
    if not outcome.ok or not outcome.svg:
        error = in_file_lines(text, outcome.error).as_dict() if outcome.error else {
            "message": "mermaid rendered nothing"}
        raise ToolError("E_PARSE_FAIL", f"{file} line {error.get('line')}: {error['message']}",
                        details={"file": file, **error}, hint=error.get("hint"))
    data = standalone_svg(outcome.svg, theme).encode() if fmt == "svg" else svg_to_png(outcome.svg, theme)
    write_in_workspace(ctx.sandbox, output, data)
    width, height = svg_size(outcome.svg)
    return {"file": file, "output": output, "format": fmt, "type": outcome.diagram_type,
            "width": round(width), "height": round(height), "bytes": len(data)}
