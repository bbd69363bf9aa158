"""The Export menu's "Share as file": one HTML file with the deck's turns and
the conversation, downloaded and kept under exports/, without the session's
token (docs/sharing.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma.share.model import read_share_file
from pneuma.testing.slide_session import make_slide_session
from tests.browser.export_menu import open_export_menu

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                reason="needs Debian's chromium")


def test_share_as_file_downloads_every_turn_and_the_chat(pneuma_server, open_page, tmp_path, shot):
    session = make_slide_session(tmp_path / "deck", 3)
    server = pneuma_server("slide", backend="none", workspace=session.workspace)
    page = open_page(server)
    formats = open_export_menu(page)
    assert "share-file" not in formats  # the host's entry, not one of the mode's formats
    entry = page.locator('.export-menu .menu-item[data-entry="share-file"]')
    assert entry.inner_text().startswith("Share as file")
    with page.expect_download(timeout=60_000) as info:
        entry.click()
    download = info.value
    assert download.suggested_filename == "deck-share.html"
    page.wait_for_selector(".export-note.ok")
    assert "exports/deck-share.html" in page.inner_text(".export-note")
    shot(page, "share-as-file")
    text = Path(download.path()).read_text(encoding="utf-8")
    assert server.token not in text
    data = read_share_file(Path(download.path()))
    assert [t.ref for t in data.turns] == ["1", "2", "3"]
    assert [m.role for m in data.conversation] == ["user", "assistant"] * 3
    assert data.files_at(2)["slides/02.html"].decode().count("Slide 2, turn 2") == 1
    saved = session.workspace / "exports" / "deck-share.html"
    assert saved.read_text(encoding="utf-8") == text
