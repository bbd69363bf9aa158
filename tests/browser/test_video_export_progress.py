"""A video export from the page (issue 30, video): the Export menu offers
MP4, WebM and a PNG frame, shows how far a running export is (frames done
of all) and downloads a frame-exact MP4 whose frame at a time is the
picture the player shows at that time; an export whose page goes away is
stopped and leaves no half file."""

from __future__ import annotations

import io
import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import pytest
from PIL import Image, ImageChops, ImageStat

from tests.browser.browser_helpers import api_call, viewer_answer
from tests.browser.export_menu import open_export_menu
from tests.browser.module_run import module_page, module_run
from tests.modes.video_sample import COUNT, SLIDE, composition

pytestmark = pytest.mark.skipif(shutil.which("ffprobe") is None, reason="needs Debian's ffmpeg")
FRAMES = 60
CURRENT = ".video-scene-frame.current"
SEED = {"video.json": json.dumps(composition()), "scenes/01-slide.html": SLIDE, "scenes/02-count.html": COUNT}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    with module_run(tmp_path_factory.mktemp("video-export"), "video", SEED) as served:
        yield served


@pytest.fixture(scope="module")
def page(browser: Any, server: SimpleNamespace) -> Iterator[Any]:
    with module_page(browser, server.url) as opened:
        opened.served = server
        yield opened


def server_of(page: Any) -> SimpleNamespace:
    return page.served  # type: ignore[no-any-return]


def test_the_menu_shows_progress_and_downloads_a_frame_exact_mp4(page: Any, tmp_path: Path) -> None:
    assert open_export_menu(page) == ["mp4", "webm", "png"]
    with page.expect_download(timeout=120_000) as info:
        page.click('.export-menu .menu-item[data-format="mp4"]')
        note = page.wait_for_selector(".export-note.busy:text-matches('\\\\d+/60')", timeout=60_000)
        shown = note.text_content() or ""
    assert shown.startswith("Exporting MP4 video (H.264)… ") and 0 < int(shown.split("… ")[1].split("/")[0]) <= FRAMES
    target = tmp_path / "video.mp4"
    info.value.save_as(target)
    frames = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                             "stream=nb_read_frames", "-of", "csv=p=0", str(target)],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert frames == str(FRAMES)
    page.wait_for_selector(".export-note.ok")
    # the player at 0.5 s shows the MP4's frame 15, and not its frame 45 (a second later)
    viewer_answer(server_of(page), "navigate-to", {"time": 0.5})
    page.wait_for_function("() => document.querySelector('.video-stage').dataset.frame === '15'")
    shown = Image.open(io.BytesIO(page.locator(CURRENT).screenshot())).convert("RGB")
    same, later = (decoded(target, n, tmp_path).resize(shown.size, Image.Resampling.BILINEAR) for n in (15, 45))
    assert difference(same, shown) < 3 and difference(later, shown) > 10, (difference(same, shown),
                                                                           difference(later, shown))


def decoded(video: Path, number: int, folder: Path) -> Image.Image:
    target = folder / f"frame{number}.png"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(video), "-vf", f"select=eq(n\\,{number})",
                    "-frames:v", "1", str(target)], check=True)
    return Image.open(target).convert("RGB")


def difference(a: Image.Image, b: Image.Image) -> float:
    return sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 3


def _progress(server: SimpleNamespace) -> dict[str, Any]:
    status, body = api_call(server, "GET", "/api/export/webm/progress")
    assert status == 200
    return dict(body)


def test_an_export_whose_page_went_away_stops_and_leaves_no_half_file(server: SimpleNamespace) -> None:
    address = urlsplit(server.base)
    connection = socket.create_connection((address.hostname or "127.0.0.1", address.port or 80))
    connection.sendall((f"GET /api/export/webm HTTP/1.1\r\nHost: {address.netloc}\r\n"
                        f"Authorization: Bearer {server.token}\r\n\r\n").encode())
    deadline = time.monotonic() + 60
    while _progress(server).get("done", 0) < 3:  # frames are being encoded
        assert time.monotonic() < deadline, "the export never reported progress"
        time.sleep(0.05)
    connection.close()  # the tab closed
    while _progress(server)["running"]:
        assert time.monotonic() < deadline, "the export did not stop"
        time.sleep(0.05)
    exports = server.workspace / "exports"
    left = [p.name for p in exports.iterdir()] if exports.exists() else []
    assert not [name for name in left if name.endswith((".webm", ".part"))]


def test_the_png_export_is_the_frame_at_the_time_asked(server: SimpleNamespace) -> None:
    status, body = api_call(server, "GET", "/api/export/png?time=0.5")
    assert status == 200, body
    picture = Image.open(io.BytesIO(body)).convert("RGB")
    assert picture.size == (320, 180)
    assert picture.getpixel((160, 90)) == (255, 136, 0)  # the CSS animation's box, half way across
    status, body = api_call(server, "GET", "/api/export/png?time=soon")
    assert (status, body["error"]["code"]) == (400, "E_BAD_ARGS")
    assert "time must be a time in seconds ≥ 0, not 'soon'" in body["error"]["message"]
    # The review pins' picture route says a wrong time and a broken video.json as E_* errors, never a 500.
    status, body = api_call(server, "GET", "/api/video/frame?time=soon")
    assert (status, body["error"]["code"]) == (400, "E_BAD_ARGS")
    composition = server.workspace / "video.json"
    good = composition.read_text(encoding="utf-8")
    try:
        composition.write_text("{", encoding="utf-8")
        status, body = api_call(server, "GET", "/api/video/frame?time=0")
        assert (status, body["error"]["code"]) == (409, "E_CONFLICT") and "not valid JSON" in body["error"]["message"]
    finally:
        composition.write_text(good, encoding="utf-8")
