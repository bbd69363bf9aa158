"""The mode-maker started from an installed mode (`--param from=diagram`):
the workspace is the diagram mode's package renamed, and Play mounts the
forked viewer with what it loads beside its modules (the mermaid bundle,
too large for the page's file snapshot) and its seed diagrams (a suffix only
the forked mode reads as text), all inside the sandboxed frame."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import viewer_answer
from tests.browser.module_run import module_page
from tests.browser.test_mode_maker import maker_run

MERMAID = Path(__file__).resolve().parents[2] / "plugins/diagram/pneuma_diagram/static/vendor/mermaid.iife.js"

pytestmark = pytest.mark.skipif(not MERMAID.exists(), reason="the mermaid bundle is not built (scripts/build-web)")


def test_a_fork_of_the_diagram_mode_plays_its_diagrams(browser: Any, tmp_path: Path) -> None:
    with maker_run(tmp_path, "name=flows", "from=diagram") as server, module_page(browser, server.url) as page:
        frame = page.frame_locator("iframe.mm-play-frame")
        expect(frame.locator(".dg-tab")).to_have_count(2, timeout=30_000)
        expect(frame.locator(".dg-stage svg g.node").first).to_be_visible(timeout=30_000)
        manifest = json.loads((server.workspace / "pneuma_flows" / "manifest.json").read_text())
        assert manifest["name"] == "flows"
        answer = viewer_answer(server, "describe-view")
        assert answer["data"]["play"]["status"] == "mounted" and answer["data"]["play"]["problems"] == []
        assert "Mode under construction: flows 0.1.0 (package pneuma_flows)" in answer["message"]
