"""``pneuma export --mode webcraft``: the site as a zip, or full-page PNGs of
every page at phone, tablet and desktop widths."""

from __future__ import annotations

import posixpath
import re
import tempfile
import zipfile
from pathlib import Path

from pneuma.api import (
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    ToolError,
    run_sync,
    timed_out,
)

from .render import screenshot_pages
from .site import VIEWPORTS, SiteFile, copy_site, read_site

# href="…", src="…" in HTML and url(…) in CSS: the references a zip must carry.
_HTML_REF = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"'#?]+)""", re.IGNORECASE)
_CSS_REF = re.compile(r"""url\(\s*["']?([^"')#?]+)""", re.IGNORECASE)
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)


def _missing_references(files: list[SiteFile]) -> list[str]:
    present = {f.path for f in files}
    problems: list[str] = []
    for item in files:
        lower = item.path.lower()
        if lower.endswith((".html", ".htm")):
            pattern = _HTML_REF
        elif lower.endswith(".css"):
            pattern = _CSS_REF
        else:
            continue
        text = item.data.decode("utf-8", errors="replace")
        for ref in sorted(set(pattern.findall(text))):
            ref = ref.strip()
            if not ref or _EXTERNAL.match(ref):
                continue
            # A root-relative "/css/a.css" means the site's root, as on a web server.
            joined = ref[1:] if ref.startswith("/") else posixpath.join(posixpath.dirname(item.path), ref)
            target = posixpath.normpath(joined)
            if target not in present and target.rstrip("/") + "/index.html" not in present:
                problems.append(f"{item.path} refers to {ref}, which is not in the site")
    return problems


def _export_zip(request: ExportRequest) -> ExportResult:
    files = _read(request.workspace)
    with zipfile.ZipFile(request.output, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for item in files:
            archive.writestr(item.path, item.data)
    pages = sum(1 for f in files if f.path.lower().endswith((".html", ".htm")))
    return ExportResult(files=[request.output], warnings=_missing_references(files),
                        summary=f"{pages} pages, {len(files)} files")


def _export_png(request: ExportRequest) -> ExportResult:
    with tempfile.TemporaryDirectory(prefix="pneuma-webcraft-") as tmp:
        root = Path(tmp)
        pages = copy_site(request.workspace, root)
        if not pages:
            raise ExportError(f"{request.workspace} has no HTML page to capture")
        jobs = [(page, viewport, request.output / f"{_png_stem(page)}-{viewport}.png")
                for page in pages for viewport in VIEWPORTS]
        try:
            shots, left_out = run_sync(screenshot_pages(root, jobs))
        except ImportError as error:
            raise ExportError(f"PNG export needs the playwright package ({error})") from error
    if not shots:
        raise timed_out(left_out)
    summary = f"{len(pages)} pages × {len(VIEWPORTS)} widths"
    if left_out:
        summary += f", {len(left_out)} of {len(jobs)} screenshots left out"
    return ExportResult(files=[shot.output for shot in shots], summary=summary, left_out=left_out)


def _png_stem(page: str) -> str:
    return re.sub(r"\.html?$", "", page, flags=re.IGNORECASE).replace("/", "_")


def _read(workspace: Path) -> list[SiteFile]:
    try:
        files = read_site(workspace)
    except ToolError as error:
        raise ExportError(f"cannot read the site: {error.message}") from error
    if not any(f.path.lower().endswith((".html", ".htm")) for f in files):
        raise ExportError(f"{workspace} has no HTML page; webcraft exports a static site")
    return files


def export(request: ExportRequest) -> ExportResult:
    if request.format == "zip":
        return _export_zip(request)
    if request.format == "png":
        return _export_png(request)
    raise ExportError(f"the webcraft mode cannot export {request.format!r}")


def _default_name(workspace: Path) -> str:
    return workspace.name or "site"


WEBCRAFT_EXPORTER = Exporter(
    mode="webcraft",
    formats=[
        ExportFormat("zip", {"en": "Site (zip)", "zh-CN": "网站（zip）"}, ".zip"),
        ExportFormat("png", {"en": "Screenshots (PNG per page and width)",
                             "zh-CN": "截图（每个页面和宽度一张 PNG）"}, ""),
    ],
    export=export,
    default_name=_default_name,
    site_format="zip",  # what `pneuma publish` puts on a target
)
