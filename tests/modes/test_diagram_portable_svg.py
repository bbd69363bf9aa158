"""Diagram SVG exports are SVG files every reader opens (issue 25, item 11),
and the diagram tools keep one warm Chromium (item 22).

Each diagram type mermaid draws is exported by the real exporter, then read
by readers nobody on the project wrote: Python's XML parser, librsvg
(``rsvg-convert``) and Chromium opening the file as an image. The warm
renderer is checked by what a person would see of it: the same Chromium
process answers two calls, and a Chromium killed between calls is replaced
without the next call failing.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from diagram_type_corpus import CORPUS

from pneuma.testing import call_tool, make_workspace

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "diagram" / "pneuma_diagram"
BUNDLE = PLUGIN / "static" / "vendor" / "mermaid.iife.js"
SVG_NS = "{http://www.w3.org/2000/svg}"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
RSVG = shutil.which("rsvg-convert")

needs_mermaid = pytest.mark.skipif(
    not BUNDLE.exists() or not Path("/usr/bin/chromium").exists(),
    reason="needs the mermaid bundle (scripts/build-web) and Debian's chromium",
)
needs_rsvg = pytest.mark.skipif(RSVG is None, reason="needs librsvg2-bin (rsvg-convert)")


def _image(data: bytes) -> Any:
    from PIL import Image

    return Image.open(io.BytesIO(data)).convert("RGB")


def _rsvg_png(svg_file: Path) -> bytes:
    assert RSVG is not None
    done = subprocess.run([RSVG, str(svg_file)], capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, (svg_file.name, done.stderr.decode()[-300:])
    return done.stdout


def _ink(image: Any) -> int:
    """How many pixels are darker than the white page."""
    return int(image.convert("L").point(lambda v: 255 if v < 250 else 0).histogram()[255])


def _chromium_opens(files: list[Path]) -> dict[str, int]:
    """Each file's natural width when Chromium loads it as an <img>: 0 when
    it cannot read it (an SVG that is not XML does not load)."""
    from pneuma_diagram.warm import RENDERER

    async def work(renderer: Any) -> dict[str, int]:
        page = (await renderer.page("/usr/bin/chromium", "test-images")).page
        widths: dict[str, int] = {}
        for file in files:
            await page.goto(file.with_suffix(".html").as_uri())
            widths[file.name] = await page.evaluate(
                "() => new Promise((ok) => { const i = document.images[0];"
                " if (i.complete) ok(i.naturalWidth); else { i.onload = () => ok(i.naturalWidth);"
                " i.onerror = () => ok(0); } })")
        await renderer.drop("test-images")
        return widths

    for file in files:
        file.with_suffix(".html").write_text(f'<img src="{file.name}">', encoding="utf-8")
    return RENDERER.call(work)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every diagram type of the corpus, exported as SVG by the mode's exporter."""
    from pneuma_diagram.export import export_diagrams

    workspace = make_workspace("diagram", tmp_path_factory.mktemp("types") / "ws")
    for old in workspace.glob("*.mmd"):
        old.unlink()
    for name, source in CORPUS.items():
        (workspace / f"{name}.mmd").write_text(source, encoding="utf-8")
    out = workspace.parent / "out"
    written, left_out = export_diagrams(workspace, "svg", out)
    assert not left_out
    assert sorted(p.stem for p in written) == sorted(CORPUS)
    return out


@needs_mermaid
@needs_rsvg
def test_every_diagram_type_exports_an_svg_file_every_reader_opens(exported: Path) -> None:
    files = sorted(exported.glob("*.svg"))
    for file in files:
        text = file.read_text(encoding="utf-8")
        root = ET.fromstring(text)  # raises on &nbsp;, an unbound xlink:, a doubled attribute
        assert root.tag == f"{SVG_NS}svg", file.name
        assert len(re.findall(r'\sheight="', text.split(">", 2)[1])) == 1, file.name
        assert not list(root.iter(f"{SVG_NS}foreignObject")), f"{file.name} holds HTML"
        assert not [el for el in root.iter() if el.get("filter")], f"{file.name} keeps a filter"
        assert not re.search(r"filter\s*:\s*drop-shadow", text), file.name
        for el in root.iter():
            if el.tag in (f"{SVG_NS}text", f"{SVG_NS}tspan") and el.text and el.text != el.text.strip():
                assert el.get(XML_SPACE) == "preserve", (file.name, el.text)
        picture = _image(_rsvg_png(file))
        assert _ink(picture) > 200, f"librsvg draws {file.name} blank"
    widths = _chromium_opens(files)
    assert all(width > 0 for width in widths.values()), widths


@needs_mermaid
@needs_rsvg
def test_a_sequence_diagrams_participant_boxes_show_in_librsvg_where_chromium_draws_them(exported: Path) -> None:
    from pneuma_diagram.render import svgs_to_png

    file = exported / "sequence.svg"
    text = file.read_text(encoding="utf-8")
    root = ET.fromstring(text)
    vb_x, vb_y, vb_w, _vb_h = (float(v) for v in root.get("viewBox", "").split())
    scale = float(root.get("width", "0")) / vb_w
    boxes = [el for el in root.iter(f"{SVG_NS}rect") if "actor" in (el.get("class") or "").split()]
    assert len(boxes) == 4  # Alice and Bob, top and bottom
    librsvg = _image(_rsvg_png(file))
    chromium = _image(svgs_to_png([text], scale=1)[0] or b"")
    for box in boxes:
        # inside the box, clear of its label and its rounded corner
        x = round((float(box.get("x", 0)) + 12 - vb_x) * scale)
        y = round((float(box.get("y", 0)) + 12 - vb_y) * scale)
        drawn, expected = librsvg.getpixel((x, y)), chromium.getpixel((x, y))
        assert expected != (255, 255, 255), "Chromium draws the box"
        assert max(abs(a - b) for a, b in zip(drawn, expected, strict=True)) < 24, (box.get("name"), drawn, expected)


@needs_mermaid
@needs_rsvg
def test_a_label_mermaid_draws_as_html_is_readable_text_in_librsvg(exported: Path) -> None:
    """A user journey's section name is HTML in mermaid's drawing (with an
    SVG fallback in the colour of its own box): in the file it is SVG text
    librsvg draws in the colour the viewer shows it."""
    file = exported / "journey.svg"
    root = ET.fromstring(file.read_text(encoding="utf-8"))
    [label] = [el for el in root.iter(f"{SVG_NS}text") if "".join(el.itertext()).strip() == "Morning"]
    span = label.find(f"{SVG_NS}tspan")
    assert span is not None
    vb_x, vb_y, vb_w, _vb_h = (float(v) for v in root.get("viewBox", "").split())
    scale = float(root.get("width", "0")) / vb_w
    x, y = (float(span.get("x", 0)) - vb_x) * scale, (float(span.get("y", 0)) - vb_y) * scale
    picture = _image(_rsvg_png(file)).convert("L")
    around = picture.crop((round(x - 30), round(y - 8), round(x + 30), round(y + 8)))
    assert min(around.getextrema()) < 128, "the section name is not drawn (or drawn in its box's colour)"


# --- the warm renderer (item 22) --------------------------------------------------------


def _renderer_pids() -> list[int]:
    """The warm renderer's Chromium: the browser process (not its helpers)
    with the renderer's marker on its command line."""
    from pneuma_diagram.warm import MARKER

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (MARKER.encode() in args and not any(a.startswith(b"--type=") for a in args)
                and _descends_from_us(entry.name)):
            found.append(int(entry.name))
    return found


def _descends_from_us(pid: str) -> bool:
    """Whether process ``pid`` was started by this process (through
    Playwright's driver): other test runs on the machine have their own."""
    ours = os.getpid()
    while pid not in ("0", "1"):
        try:
            stat = (Path("/proc") / pid / "stat").read_text()
        except OSError:
            return False
        pid = stat[stat.rindex(")") + 2:].split()[1]
        if pid == str(ours):
            return True
    return False


@needs_mermaid
def test_two_tool_calls_use_one_warm_chromium(tmp_path: Path) -> None:
    workspace = make_workspace("diagram", tmp_path / "ws")
    assert call_tool("diagram", workspace, "validate_diagram", {})["valid"] is True
    [first] = _renderer_pids()
    answer = call_tool("diagram", workspace, "render_diagram", {"file": "architecture.mmd"})
    assert answer["output"] == "exports/architecture.svg", answer
    assert call_tool("diagram", workspace, "render_diagram", {"file": "architecture.mmd", "format": "png"})[
        "bytes"] > 0
    assert _renderer_pids() == [first]


@needs_mermaid
def test_a_killed_renderer_is_replaced_and_the_next_call_succeeds(tmp_path: Path) -> None:
    workspace = make_workspace("diagram", tmp_path / "ws")
    assert call_tool("diagram", workspace, "validate_diagram", {})["valid"] is True
    [killed] = _renderer_pids()
    os.kill(killed, signal.SIGKILL)
    answer = call_tool("diagram", workspace, "render_diagram", {"file": "message-flow.mmd"})
    assert answer.get("type") == "sequence", answer
    assert call_tool("diagram", workspace, "validate_diagram", {"file": "message-flow.mmd"})["valid"] is True
    [now] = _renderer_pids()
    assert now != killed
