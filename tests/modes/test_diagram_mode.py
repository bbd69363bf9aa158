"""The diagram mode (plugins/diagram): manifest, seeds, skill, its two tools
through the agent's path (real mermaid in headless Chromium), its files
delivered to the viewer as text, and `pneuma export --format svg|png`, each
output read back (SVG parsed, PNG dimensions).

The browser side is tests/browser/test_diagram_viewer.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pneuma.testing import call_tool, install_skill, load_mode, make_workspace, serve

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "diagram" / "pneuma_diagram"
BUNDLE = PLUGIN / "static" / "vendor" / "mermaid.iife.js"
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))
SEEDS = ["architecture.mmd", "message-flow.mmd"]
BROKEN = "flowchart TD\n  A[Start] --> B\n  B -->> C\n"
SVG_NS = "{http://www.w3.org/2000/svg}"

needs_mermaid = pytest.mark.skipif(
    not BUNDLE.exists() or not Path("/usr/bin/chromium").exists(),
    reason="needs the mermaid bundle (scripts/build-web) and Debian's chromium",
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace("diagram", tmp_path / "ws")


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def svg_texts(svg: str) -> str:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG_NS}svg"
    return " ".join(" ".join(el.itertext()) for el in root.iter(f"{SVG_NS}text"))


# --- the mode as Pneuma loads it ------------------------------------------------------


def test_manifest_declares_the_viewer_tools_and_text_files() -> None:
    mode = load_mode("diagram")
    manifest = mode.manifest
    assert manifest.viewer_api.workspace.type == "all"
    assert manifest.viewer.watch_patterns == ["**/*.mmd"]
    assert manifest.viewer.text_suffixes == [".mmd"]
    assert [a.id for a in manifest.viewer_api.actions] == ["navigate-to", "describe-view", "ui:set-theme", "ui:zoom"]
    assert {t.name for t in manifest.tools} == {"validate_diagram", "render_diagram"}


def test_seeds_and_skill(workspace: Path) -> None:
    assert sorted(p.name for p in workspace.glob("*.mmd")) == SEEDS
    assert (workspace / "architecture.mmd").read_text(encoding="utf-8").lstrip("%\n").count("flowchart") >= 1
    first = install_skill("diagram", workspace)
    claude_md = (workspace / "CLAUDE.md").read_text(encoding="utf-8")
    assert "navigate-to" in claude_md and "validate_diagram" in claude_md
    assert (workspace / ".claude" / "skills" / "pneuma-diagram" / "SKILL.md").is_file()
    servers = json.loads((workspace / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers["pneuma-diagram"]["args"] == ["mcp", "--mode", "diagram", "--workspace", "."]
    assert first.changed and not install_skill("diagram", workspace).changed


def test_mmd_files_reach_the_viewer_as_text(workspace: Path) -> None:
    async def files() -> list[dict[str, Any]]:
        async with serve("diagram", workspace, backend="none") as server:
            response = await server.get("/api/files")
            assert response.status == 200
            body = await response.json()
            return body["files"] if isinstance(body, dict) else body

    listed = {f["path"]: f for f in asyncio.run(files())}
    assert set(listed) == set(SEEDS)
    assert listed["architecture.mmd"]["content"] == (workspace / "architecture.mmd").read_text(encoding="utf-8")
    assert not listed["architecture.mmd"].get("binary")


# --- tools ----------------------------------------------------------------------------


def test_one_mermaid_bundle_serves_the_viewer_and_headless_rendering() -> None:
    """scripts/build-web bundles mermaid once: the classic script the viewer
    adds with a <script> element and render.py loads from its file: URL."""
    if not BUNDLE.exists():
        pytest.skip("the mermaid bundle is not built (scripts/build-web)")
    assert sorted(p.name for p in BUNDLE.parent.iterdir()) == ["mermaid.iife.js"]
    viewer = (PLUGIN / "static" / "viewer.js").read_text(encoding="utf-8")
    assert '"./vendor/mermaid.iife.js"' in viewer and "mermaid.mjs" not in viewer
    build = json.loads((PLUGIN.parent / "web" / "package.json").read_text(encoding="utf-8"))["scripts"]["build"]
    assert build.count("--outfile=") == 1 and "--format=iife" in build


@needs_mermaid
def test_validate_diagram_passes_the_seeds_and_places_an_error(workspace: Path) -> None:
    (workspace / "broken.mmd").write_text(BROKEN, encoding="utf-8")
    answer = call_tool("diagram", workspace, "validate_diagram", {})
    assert answer["valid"] is False
    by_file = {d["file"]: d for d in answer["diagrams"]}
    assert set(by_file) == {"architecture.mmd", "broken.mmd", "message-flow.mmd"}
    assert by_file["architecture.mmd"]["valid"] and by_file["architecture.mmd"]["type"] == "flowchart-v2"
    assert by_file["message-flow.mmd"]["type"] == "sequence"
    [error] = by_file["broken.mmd"]["errors"]
    assert error["line"] == 3 and "Parse error on line 3" in error["message"]
    assert "-->" in error["hint"]
    one = call_tool("diagram", workspace, "validate_diagram", {"file": "architecture.mmd"})
    assert one == {"valid": True, "diagrams": [{"file": "architecture.mmd", "valid": True,
                                                 "type": "flowchart-v2", "errors": []}]}


def test_validate_diagram_refuses_other_files(workspace: Path) -> None:
    assert call_tool("diagram", workspace, "validate_diagram", {"file": "notes.txt"})["error"]["code"] == "E_BAD_ARGS"
    assert call_tool("diagram", workspace, "validate_diagram", {"file": "../x.mmd"})["error"]["code"] in {
        "E_DENY_PATH", "E_BAD_ARGS"}
    assert call_tool("diagram", workspace, "validate_diagram", {"file": "missing.mmd"})["error"]["code"] == "E_NOT_FOUND"


@needs_mermaid
def test_render_diagram_writes_svg_and_png(workspace: Path) -> None:
    svg_answer = call_tool("diagram", workspace, "render_diagram", {"file": "architecture.mmd"})
    assert svg_answer["output"] == "exports/architecture.svg", svg_answer
    svg = (workspace / "exports" / "architecture.svg").read_text(encoding="utf-8")
    texts = svg_texts(svg)
    assert "aiohttp" in texts and "Workspace" in texts  # labels are SVG text, not HTML
    root = ET.fromstring(svg)
    assert round(float(root.get("width"))) == svg_answer["width"]
    png_answer = call_tool("diagram", workspace, "render_diagram",
                           {"file": "message-flow.mmd", "format": "png", "output": "out/flow.png", "theme": "dark"})
    width, height = png_size((workspace / "out" / "flow.png").read_bytes())
    assert (width, height) == (2 * png_answer["width"], 2 * png_answer["height"])


@needs_mermaid
def test_render_diagram_reports_the_syntax_error(workspace: Path) -> None:
    (workspace / "broken.mmd").write_text(BROKEN, encoding="utf-8")
    error = call_tool("diagram", workspace, "render_diagram", {"file": "broken.mmd"})["error"]
    assert error["code"] == "E_PARSE_FAIL"
    assert error["details"]["line"] == 3 and error["hint"]
    assert not (workspace / "exports" / "broken.svg").exists()


@needs_mermaid
def test_the_tools_are_served_over_mcp(workspace: Path) -> None:
    """What Claude Code reaches through .mcp.json: `pneuma mcp --mode diagram`."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    (workspace / "broken.mmd").write_text(BROKEN, encoding="utf-8")
    assert PNEUMA

    async def session() -> tuple[set[str], Any]:
        params = StdioServerParameters(command=PNEUMA, args=["mcp", "--mode", "diagram", "--workspace",
                                                             str(workspace)], env=dict(os.environ))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = {tool.name for tool in (await client.list_tools()).tools}
            return tools, await client.call_tool("validate_diagram", {"file": "broken.mmd"})

    tools, result = asyncio.run(asyncio.wait_for(session(), 90))
    assert {"validate_diagram", "render_diagram"} <= tools
    answer = json.loads(result.content[0].text)
    assert answer["valid"] is False and answer["diagrams"][0]["errors"][0]["line"] == 3


# --- export ---------------------------------------------------------------------------


def export(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert PNEUMA
    return subprocess.run([PNEUMA, "export", "--mode", "diagram", "-w", str(workspace), *args],
                          capture_output=True, text=True, timeout=180, check=False)


@needs_mermaid
def test_export_svg_and_png_in_the_light_and_the_dark_theme(workspace: Path, tmp_path: Path) -> None:
    """One test for the four formats: the dark SVG is compared with the
    light one, which is exported (a Chromium start) once."""
    listed = export(workspace, "--list")
    assert listed.returncode == 0 and listed.stdout.split()[0] == "svg" and "png" in listed.stdout
    assert [line.split("\t")[0] for line in listed.stdout.split("\n") if line] == ["svg", "png", "svg-dark", "png-dark"]
    done = export(workspace, "--format", "svg", "-o", str(tmp_path / "svg"))
    assert done.returncode == 0, done.stderr
    svgs = sorted((tmp_path / "svg").iterdir())
    assert [p.name for p in svgs] == ["architecture.svg", "message-flow.svg"]
    assert "Person" in svg_texts(svgs[1].read_text(encoding="utf-8"))
    done = export(workspace, "--format", "png", "-o", str(tmp_path / "png"))
    assert done.returncode == 0, done.stderr
    for png in sorted((tmp_path / "png").iterdir()):
        width, height = png_size(png.read_bytes())
        assert width > 300 and height > 200, (png.name, width, height)
    light_svg = (tmp_path / "svg" / "architecture.svg").read_text(encoding="utf-8")

    done = export(workspace, "--format", "svg-dark", "-o", str(tmp_path / "svg-dark"))
    assert done.returncode == 0, done.stderr
    assert "dark theme" in done.stderr
    dark_svgs = sorted((tmp_path / "svg-dark").iterdir())
    assert [p.name for p in dark_svgs] == ["architecture.svg", "message-flow.svg"]
    dark = dark_svgs[0].read_text(encoding="utf-8")
    root = ET.fromstring(dark)
    # The first thing drawn is a dark background over the whole viewBox ...
    background = next(el for el in root if el.tag == f"{SVG_NS}rect")
    assert luminance(background.get("fill", "#fff")) < 0.2, background.attrib
    x, y, width, height = root.get("viewBox").split()
    assert (background.get("x"), background.get("y"), background.get("width"), background.get("height")) == (
        x, y, width, height)
    # ... under mermaid's dark theme: light text, dark node fills, unlike the light export.
    style = "".join(el.text or "" for el in root.iter(f"{SVG_NS}style"))
    text_fill = re.search(r"#pneuma-diagram-0\{[^}]*?fill:(#[0-9a-fA-F]{3,6})", style)
    assert text_fill and luminance(text_fill.group(1)) > 0.6, style[:300]
    assert "aiohttp" in svg_texts(dark)
    assert "pneuma-background" not in light_svg and light_svg != dark
    done = export(workspace, "--format", "png-dark", "-o", str(tmp_path / "png-dark"))
    assert done.returncode == 0, done.stderr
    for png in sorted((tmp_path / "png-dark").iterdir()):
        data = png.read_bytes()
        width, height = png_size(data)
        assert width > 300 and height > 200, (png.name, width, height)
        r, g, b = png_corner(data)
        assert max(r, g, b) < 60, (png.name, (r, g, b))


def luminance(colour: str) -> float:
    """0 (black) to 1 (white) for a #rgb or #rrggbb colour."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    r, g, b = (int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def png_corner(data: bytes) -> tuple[int, int, int]:
    """The top-left pixel's RGB."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        r, g, b = image.convert("RGB").getpixel((0, 0))
    return r, g, b


@needs_mermaid
def test_render_diagram_in_the_dark_theme_has_a_dark_background(workspace: Path) -> None:
    answer = call_tool("diagram", workspace, "render_diagram", {"file": "message-flow.mmd", "theme": "dark"})
    root = ET.fromstring((workspace / answer["output"]).read_text(encoding="utf-8"))
    background = next(el for el in root if el.tag == f"{SVG_NS}rect")
    assert background.get("class") == "pneuma-background" and luminance(background.get("fill", "#fff")) < 0.2


@needs_mermaid
def test_export_fails_in_one_line_on_a_broken_diagram(workspace: Path, tmp_path: Path) -> None:
    (workspace / "broken.mmd").write_text(BROKEN, encoding="utf-8")
    done = export(workspace, "--format", "svg", "-o", str(tmp_path / "out"))
    assert done.returncode != 0
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("pneuma: error: broken.mmd line 3: Parse error on line 3: Expecting ")
    assert line.endswith("got 'TAGEND' (1 diagram(s) with errors; nothing exported)")
    assert not any((tmp_path / "out").glob("*.svg"))
