"""The webcraft mode (plugins/webcraft): manifest, seed site, skill, the
capture_screenshot tool, the preview's content site and its exports, each
checked the way a person or the agent would meet it."""

from __future__ import annotations

import asyncio
import io
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pneuma.testing import call_tool, install_skill, load_mode, make_workspace, serve

CHROMIUM = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))
SEED_FILES = {"index.html", "about.html", "css/style.css", "js/main.js", "assets/logo.svg"}


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return make_workspace("webcraft", tmp_path / "site")


def test_the_manifest_declares_the_viewer_actions_tool_and_workflows() -> None:
    mode = load_mode("webcraft")
    manifest = mode.manifest
    actions = {a.id for a in manifest.viewer_api.actions}
    assert actions == {"navigate-to", "set-viewport", "describe-view", "get-console-errors", "check-accessibility"}
    assert manifest.viewer_api.workspace.type == "all"
    assert {t.name for t in manifest.tools} == {"capture_screenshot"}
    assert {w.id for w in manifest.workflows} == {"polish", "a11y"}


def test_the_seed_is_a_linked_site_whose_references_all_resolve(site: Path) -> None:
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file() and ".pneuma" not in p.parts}
    assert SEED_FILES <= files
    for page in ("index.html", "about.html"):
        html = (site / page).read_text()
        assert '<meta name="viewport"' in html and "<title>" in html and 'lang="en"' in html
        for ref in re.findall(r'(?:href|src)="([^"#]+)"', html):
            if not re.match(r"^[a-z]+:", ref):
                assert (site / ref).is_file(), f"{page} refers to missing {ref}"
    # A workspace that already holds a page gets no seeds.
    own = site.parent / "own"
    own.mkdir()
    (own / "index.html").write_text("<!doctype html><title>Mine</title>")
    make_workspace("webcraft", own)
    assert not (own / "about.html").exists()


def test_the_skill_and_claude_md_teach_the_actions_and_the_context(site: Path) -> None:
    install_skill("webcraft", site)
    skill = (site / ".claude/skills/pneuma-webcraft/SKILL.md").read_text()
    claude_md = (site / "CLAUDE.md").read_text()
    for action in ("navigate-to", "set-viewport", "get-console-errors", "check-accessibility"):
        assert action in claude_md
    assert 'selector="' in skill and "capture_screenshot" in skill
    assert (site / ".claude/commands/polish.md").is_file() and (site / ".claude/commands/a11y.md").is_file()
    assert install_skill("webcraft", site).changed is False


@CHROMIUM
def test_capture_screenshot_renders_a_page_at_the_asked_width(site: Path) -> None:
    phone = call_tool("webcraft", site, "capture_screenshot", {"page": "index.html", "viewport": "phone"})
    assert phone["path"] == ".pneuma/captures/index-phone.png"
    width, height = png_size((site / phone["path"]).read_bytes())
    assert (width, height) == (phone["width"], phone["height"])
    assert width == 390 and height > 844  # full page, taller than the screen
    desktop = call_tool("webcraft", site, "capture_screenshot",
                        {"page": "about.html", "viewport": "desktop", "output": "shots/about.png"})
    assert png_size((site / "shots/about.png").read_bytes())[0] == 1280 == desktop["width"]


@CHROMIUM
def test_capture_screenshot_shows_the_srcset_candidate_the_width_picks(site: Path) -> None:
    from PIL import Image  # noqa: PLC0415 - only the image tests read pixels

    (site / "img").mkdir()
    Image.new("RGB", (400, 400), (220, 0, 0)).save(site / "img" / "small.png")
    Image.new("RGB", (1200, 400), (0, 0, 220)).save(site / "img" / "large.png")
    (site / "pictures.html").write_text(
        "<!doctype html><html lang='en'><title>Pictures</title>"
        "<style>body{margin:0}img{display:block;width:100%}</style>"
        "<img srcset='img/small.png 400w, img/large.png 1200w' sizes='100vw' alt='responsive'></html>")
    colours = {}
    for viewport in ("phone", "desktop"):
        shot = call_tool("webcraft", site, "capture_screenshot", {"page": "pictures.html", "viewport": viewport})
        with Image.open(site / shot["path"]) as image:
            colours[viewport] = image.convert("RGB").getpixel((20, 20))
    # The small (red) file at 390 px, the large (blue) one at 1280 px.
    assert colours == {"phone": (220, 0, 0), "desktop": (0, 0, 220)}, colours


def test_capture_screenshot_refuses_missing_pages_and_paths_outside(site: Path) -> None:
    missing = call_tool("webcraft", site, "capture_screenshot", {"page": "nope.html"})
    assert missing["error"]["code"] == "E_NOT_FOUND"
    assert "index.html" in missing["error"]["details"]["pages"]
    outside = call_tool("webcraft", site, "capture_screenshot", {"page": "../x.html"})
    assert outside["error"]["code"] in {"E_DENY_PATH", "E_BAD_ARGS"}


def test_the_preview_pages_come_from_the_content_site_with_the_bridge(site: Path) -> None:
    """The viewer frames the pages from the mode's content site; the route
    that names it sits behind the server's token, and the site adds the
    bridge to each page (tests/server/test_content_site.py covers the site)."""
    import aiohttp

    async def scenario() -> None:
        async with serve("webcraft", site) as server:
            assert (await server.get("/api/webcraft/site", token=False)).status == 401
            info = await (await server.get("/api/webcraft/site")).json()
            assert info["origin"].startswith("http://127.0.0.1:") and info["token"] != server.token
            async with aiohttp.ClientSession() as client:
                headers = {"Authorization": f"Bearer {info['token']}"}
                async with client.get(info["origin"] + "/about.html", headers=headers) as page:
                    html = await page.text()
                    assert page.status == 200 and "About Lumen" in html
                    assert '<script src="/__pneuma__/bridge.js"></script>' in html
                    assert "allow-same-origin" not in page.headers["Content-Security-Policy"]
            # The old built-frame routes are gone.
            assert (await server.post("/api/webcraft/frames", json={"html": "x"})).status in (404, 405)

    asyncio.run(scenario())


def test_export_zip_is_the_whole_site_and_warns_about_missing_files(site: Path, tmp_path: Path) -> None:
    (site / "about.html").write_text((site / "about.html").read_text().replace(
        "</main>", '<img src="assets/team.jpg" alt="The team"></main>'))
    out = tmp_path / "site.zip"
    result = subprocess.run([PNEUMA, "export", "--mode", "webcraft", "-w", str(site), "--format", "zip",
                             "-o", str(out)], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    with zipfile.ZipFile(io.BytesIO(out.read_bytes())) as archive:
        names = set(archive.namelist())
        assert SEED_FILES <= names
        assert not any(n.startswith((".pneuma/", ".claude/")) or n == "CLAUDE.md" for n in names)
        assert b"Notes that think with you." in archive.read("index.html")
    assert "assets/team.jpg" in result.stdout + result.stderr


@CHROMIUM
def test_export_png_is_every_page_at_every_width(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "shots"
    result = subprocess.run([PNEUMA, "export", "--mode", "webcraft", "-w", str(site), "--format", "png",
                             "-o", str(out)], capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, result.stderr
    widths = {p.name: png_size(p.read_bytes())[0] for p in out.glob("*.png")}
    assert widths == {"index-phone.png": 390, "index-tablet.png": 820, "index-desktop.png": 1280,
                      "about-phone.png": 390, "about-tablet.png": 820, "about-desktop.png": 1280}


def test_export_of_a_workspace_without_pages_is_one_error_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no pages")
    result = subprocess.run([PNEUMA, "export", "--mode", "webcraft", "-w", str(empty), "--format", "zip"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode != 0
    assert result.stderr.strip().startswith("pneuma: error:") and "no HTML page" in result.stderr


@CHROMIUM
def test_a_screenshot_shows_no_file_outside_the_site(site: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.html"
    secret.write_text("<body style='margin:0;background:rgb(255,0,0)'></body>")
    (site / "peek.html").write_text(
        f"<!doctype html><html lang='en'><title>Peek</title><body style='margin:0;background:#fff'>"
        f"<iframe src='{secret.as_uri()}' style='border:0;width:300px;height:300px'></iframe></body></html>")
    shot = call_tool("webcraft", site, "capture_screenshot", {"page": "peek.html", "viewport": "phone"})
    from PIL import Image  # noqa: PLC0415 - only this test reads pixels

    with Image.open(site / shot["path"]) as image:
        assert image.convert("RGB").getpixel((150, 150)) != (255, 0, 0)
