"""The agent's instruction files (Claude Code's CLAUDE.md, Codex's
AGENTS.md) are not the person's work (issue 25, item 14): no mode shows
either as a file of the workspace, exports either, or lets a scaffold
clear either; and the names are one list, ``pneuma.api``'s."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pneuma.api import AGENT_INSTRUCTION_FILES
from pneuma.testing import serve

# Each built-in mode with a file its viewer watches (its manifest's
# viewer.watchPatterns), written after the instruction files as a marker.
MARKERS = {"slide": "assets/marker.txt", "doc": "marker.md", "draw": "marker.excalidraw",
           "webgal": "game/scene/marker.txt", "coauthor": "marker.tex",
           "webcraft": "marker.html", "diagram": "marker.mmd", "illustrate": "images/marker.json"}
INSTRUCTIONS = {"CLAUDE.md": "# For Claude Code\n", "AGENTS.md": "# For Codex\n"}
PNEUMA = Path(sys.executable).parent / "pneuma"


def _write_instructions(workspace: Path) -> None:
    for name, text in INSTRUCTIONS.items():
        (workspace / name).write_text(text, encoding="utf-8")


def test_one_list_names_both_agents_files() -> None:
    assert set(AGENT_INSTRUCTION_FILES) == {"CLAUDE.md", "AGENTS.md"}


@pytest.mark.parametrize("mode", sorted(MARKERS))
async def test_no_mode_lists_or_reports_an_instruction_file(mode: str, tmp_path: Path) -> None:
    async with serve(mode, tmp_path / "ws", backend="none", watch=True) as server:
        tab = await server.tab()
        _write_instructions(server.workspace)
        # Written last: once it is reported, the instruction files had their chance.
        marker = server.workspace / MARKERS[mode]
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("marker\n", encoding="utf-8")
        await tab.wait_for("content_update", 5.0, where=lambda m: any(
            f["path"] == MARKERS[mode] for f in m["files"]))
        reported = {f["path"] for m in tab.received if m["type"] == "content_update"
                    for f in m["files"]}
        assert not reported & set(INSTRUCTIONS), reported
        listed = {f["path"] for f in (await (await server.get("/api/files")).json())["files"]}
        assert MARKERS[mode] in listed and not listed & set(INSTRUCTIONS), listed


def test_the_doc_export_leaves_out_both(tmp_path: Path) -> None:
    workspace = tmp_path / "docs"
    workspace.mkdir()
    (workspace / "README.md").write_text("# The only document\n", encoding="utf-8")
    _write_instructions(workspace)
    out = tmp_path / "book.html"
    proc = subprocess.run([str(PNEUMA), "export", "--mode", "doc", "-w", str(workspace),
                           "--format", "html", "-o", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("[pneuma] exported 1 document(s)"), proc.stderr
    page = out.read_text(encoding="utf-8")
    assert "For Codex" not in page and "For Claude Code" not in page


def test_the_webcraft_site_leaves_out_both(tmp_path: Path) -> None:
    from pneuma_webcraft.site import site_paths

    (tmp_path / "index.html").write_text("<p>home</p>", encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text("x", encoding="utf-8")
    (tmp_path / "CLAUDE.md").write_text("x", encoding="utf-8")
    assert site_paths(tmp_path) == ["index.html"]


def _template_export_module(tmp_path: Path) -> ModuleType:
    """The export module of a mode `pneuma new-mode` generates."""
    out = tmp_path / "generated"
    proc = subprocess.run([str(PNEUMA), "new-mode", "--no-input", "--output-dir", str(out),
                           "name=notebook"], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    [export_py] = out.glob("*/*/export.py")
    spec = importlib.util.spec_from_file_location("generated_notebook_export", export_py)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_generated_mode_leaves_out_both(tmp_path: Path) -> None:
    export = _template_export_module(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "page.md").write_text("# A page\n", encoding="utf-8")
    _write_instructions(workspace)
    assert export.pages_of(workspace) == ["page.md"]
    # And its viewer leaves the choice to the host's one list, not a copy of its own.
    [viewer] = (tmp_path / "generated").glob("*/*/static/viewer.js")
    assert "CLAUDE.md" not in viewer.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(INSTRUCTIONS))
async def test_a_scaffold_never_writes_an_instruction_file(name: str, tmp_path: Path) -> None:
    async with serve("slide", tmp_path / "ws", backend="none", watch=False) as server:
        await server.tab()  # a person who could be asked: the refusal comes first
        _write_instructions(server.workspace)
        response = await server.post("/api/workspace/scaffold", json={"clear": [], "files": [
            {"path": "manifest.json", "content": "{}"}, {"path": name, "content": "pwned"}]})
        body = await response.json()
        assert response.status == 403, body
        assert body["error"]["code"] == "E_DENY_PATH"
        assert (server.workspace / name).read_text(encoding="utf-8") == INSTRUCTIONS[name]
