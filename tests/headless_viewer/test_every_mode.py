"""Every built-in mode's viewer answers the agent's describe-view from the
headless viewer, with no tab open (and draw's capture-screenshot: a PNG of
the drawing), right after `pneuma run` started: the page is settled before
the first action (a viewer that reads its file after mount shows it)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image

from tests.headless_viewer.test_headless_viewer import answered

# What each mode's describe-view names for its seed workspace.
SEEN = {
    "doc": "README.md",
    "diagram": "architecture.mmd",
    "draw": "welcome.excalidraw",
    "webgal": "game/scene/start.txt",
    "coauthor": "board",
    "illustrate": "lighthouse-3",
    "video": "scenes/02-growth.html",
    "dashboard": "revenue-by-product",
}


@pytest.mark.parametrize("mode", sorted(SEEN))
def test_describe_view_answers_without_a_tab(pneuma_server: Any, mode: str) -> None:
    server = pneuma_server(mode, backend="none")
    described = answered(server, "describe-view")
    assert SEEN[mode] in str(described["data"]), described
    if mode == "draw":
        shot = answered(server, "capture-screenshot")
        image = Image.open(io.BytesIO((server.workspace / shot["data"]["path"]).read_bytes()))
        assert image.format == "PNG" and image.size[0] > 200
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 20, "the drawing's screenshot is (nearly) one colour"
