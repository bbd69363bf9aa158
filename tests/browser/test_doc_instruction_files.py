"""The doc viewer in Chromium never shows the agent's instruction files as
documents (issue 25, item 14): Codex's AGENTS.md, like Claude Code's
CLAUDE.md, gets no tab, whether it was there when the page loaded or was
written while it is open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "plugins" / "doc" / "pneuma_doc" / "static" / "vendor" / "doc-vendor.js"

pytestmark = pytest.mark.skipif(
    not VENDOR.exists(), reason="the doc viewer's vendor bundle is not built (scripts/build-web)"
)

INSTRUCTIONS = {"AGENTS.md": "# For Codex\n", "CLAUDE.md": "# For Claude Code\n"}


def tabs(page: Any) -> list[str]:
    return page.eval_on_selector_all(".pd-tab", "els => els.map(e => e.dataset.path)")


def test_no_tab_for_agents_md_or_claude_md(pneuma_server: Any, open_page: Any, tmp_path: Path) -> None:
    workspace = tmp_path / "book"
    workspace.mkdir()
    (workspace / "README.md").write_text("# Book\n", encoding="utf-8")
    for name, text in INSTRUCTIONS.items():
        (workspace / name).write_text(text, encoding="utf-8")
    server = pneuma_server("doc", backend="none", workspace=workspace)
    page = open_page(server)
    page.wait_for_selector(".pd-tab[data-path='README.md']", timeout=10_000)
    assert not set(tabs(page)) & set(INSTRUCTIONS), tabs(page)
    # Written while the page is open, as an agent would, then a document as a marker.
    for name, text in INSTRUCTIONS.items():
        (workspace / name).write_text(text + "more\n", encoding="utf-8")
    (workspace / "chapter.md").write_text("# Chapter\n", encoding="utf-8")
    page.wait_for_selector(".pd-tab[data-path='chapter.md']", timeout=10_000)
    assert not set(tabs(page)) & set(INSTRUCTIONS), tabs(page)
