"""The webgal mode's exports: the game as a playable web build (a zip of the
pinned engine and the game's files), and its scenes as a readable script in
HTML and PDF — each read back the way a person would open it.

The zip's tests point ``PNEUMA_WEBGAL_ENGINE_DIR`` at a small engine of
their own (a few bytes of "engine" instead of the real 60 MB), so what is
checked is what goes into the build; tests/browser/test_webgal_export_plays.py
plays the real engine's build."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from pneuma.api import ExportError
from pneuma.cli import cli
from pneuma.host.registry import get_mode

CHROMIUM = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")


@pytest.fixture
def mode():  # type: ignore[no-untyped-def]
    return get_mode("webgal")


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for the engine's dist/: its page, a hashed asset with the
    precompressed copy the real dist ships, and its pins."""
    root = tmp_path / "engine"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_text('<!doctype html><script type="module" src="./assets/index-1.js"></script>')
    (root / "assets" / "index-1.js").write_text("console.log('engine')")
    (root / "assets" / "index-1.js.gz").write_bytes(b"\x1f\x8b not served by a plain server")
    (root / "webgal-serviceworker.js").write_text("self.addEventListener('fetch', () => {})")
    (root / "VERSIONS.json").write_text(json.dumps({"versions": {"webgal-engine": "4.5.18"}}))
    monkeypatch.setenv("PNEUMA_WEBGAL_ENGINE_DIR", str(root))
    return root


def engine_font() -> bool:
    from pneuma_webgal.engine import engine_dir

    engine = engine_dir()
    return engine is not None and any((engine / "assets").glob("SourceHanSerifCN-*.ttf"))


def export(workspace: Path, fmt: str, output: Path) -> str:
    """`pneuma export` of the workspace; its output (the summary line)."""
    done = CliRunner().invoke(cli, ["export", "--mode", "webgal", "-w", str(workspace), "--format", fmt, "-o", str(output)])
    assert done.exit_code == 0, done.output
    return done.output


def test_the_web_build_holds_the_engine_and_the_files_the_game_uses_and_nothing_else(
        seeded: Path, engine: Path, tmp_path: Path) -> None:  # fmt: skip
    game = seeded / "game"
    (game / "background" / "unused-sketch.png").write_bytes(b"\x89PNG never shown")
    (game / "scene" / "notes.md").write_text("ideas for act two")
    (game / ".DS_Store").write_bytes(b"junk")
    outside = tmp_path / "secret.txt"
    outside.write_text("not the game's")
    (game / "bgm").mkdir(exist_ok=True)
    os.symlink(outside, game / "bgm" / "linked.mp3")
    (seeded / ".pneuma").mkdir(exist_ok=True)
    (seeded / ".pneuma" / "state.json").write_text("{}")

    out = export(seeded, "web", tmp_path / "game.zip")
    names = zipfile.ZipFile(tmp_path / "game.zip").namelist()

    # The engine at the root: index.html is what a static server serves first.
    assert {"index.html", "assets/index-1.js", "webgal-serviceworker.js", "VERSIONS.json"} <= set(names)
    assert "assets/index-1.js.gz" not in names
    # Every scene and every resource a scene or config.txt names, as the game has them.
    for rel in ("game/config.txt", "game/scene/start.txt", "game/scene/station_en.txt",
                "game/background/title.png", "game/background/station_dusk.png",
                "game/figure/mio.png", "game/figure/stationmaster.png",
                "game/animation/animationTable.json", "game/animation/enter-from-left.json"):
        assert rel in names
        assert zipfile.ZipFile(tmp_path / "game.zip").read(rel) == (seeded / rel).read_bytes()
    # Nothing the game does not use, nothing of Pneuma's, nothing through a link.
    for rel in ("game/background/unused-sketch.png", "game/scene/notes.md", "game/.DS_Store",
                "game/bgm/linked.mp3"):
        assert rel not in names
    assert not [n for n in names if n.startswith(".pneuma") or "/.pneuma" in n]
    assert names == sorted(names)
    assert "unused-sketch.png" in out  # the person is told what was left out
    readme = zipfile.ZipFile(tmp_path / "game.zip").read("README.txt").decode()
    assert "http.server" in readme and "4.5.18" in readme


def test_the_same_game_gives_the_same_zip_bytes(seeded: Path, engine: Path, tmp_path: Path) -> None:
    export(seeded, "web", tmp_path / "one.zip")
    start = seeded / "game" / "scene" / "start.txt"
    os.utime(start, (1_000_000_000, 1_000_000_000))  # touched, not changed
    export(seeded, "web", tmp_path / "two.zip")
    assert (tmp_path / "one.zip").read_bytes() == (tmp_path / "two.zip").read_bytes()

    start.write_text(start.read_text(encoding="utf-8") + "\n:One more line.;\n", encoding="utf-8")
    export(seeded, "web", tmp_path / "three.zip")
    assert (tmp_path / "three.zip").read_bytes() != (tmp_path / "one.zip").read_bytes()


def test_a_resource_a_scene_names_through_a_variable_keeps_its_whole_folder(
        seeded: Path, engine: Path, tmp_path: Path) -> None:  # fmt: skip
    game = seeded / "game"
    (game / "background" / "ending_good.png").write_bytes(b"\x89PNG good")
    (game / "scene" / "start.txt").write_text("setVar:route=good;\nchangeBg:ending_{route}.png;\n:The end.;\n")
    export(seeded, "web", tmp_path / "game.zip")
    assert "game/background/ending_good.png" in zipfile.ZipFile(tmp_path / "game.zip").namelist()


def test_a_missing_resource_is_a_warning_and_no_engine_is_unavailable(
        seeded: Path, engine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    (seeded / "game" / "figure" / "mio.png").unlink()
    out = export(seeded, "web", tmp_path / "game.zip")
    assert "mio.png" in out and "station_en.txt" in out

    from pneuma_webgal.export import EXPORTER
    monkeypatch.setenv("PNEUMA_WEBGAL_ENGINE_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setattr("pneuma_webgal.engine.PACKAGE_DIR", tmp_path / "nowhere")
    with pytest.raises(ExportError) as raised:
        EXPORTER.run(seeded, "web", tmp_path / "again.zip")
    assert raised.value.code == "E_UNAVAILABLE" and "engine" in str(raised.value)


def test_a_workspace_without_a_start_scene_cannot_be_exported(tmp_path: Path, engine: Path) -> None:
    from pneuma_webgal.export import EXPORTER
    workspace = tmp_path / "empty"
    (workspace / "game").mkdir(parents=True)
    for fmt, suffix in (("web", ".zip"), ("script-html", ".html")):
        with pytest.raises(ExportError) as raised:
            EXPORTER.run(workspace, fmt, tmp_path / f"out{suffix}")
        assert "start.txt" in str(raised.value)


def test_the_script_shows_every_scene_with_speakers_lines_choices_and_jumps(
        seeded: Path, tmp_path: Path) -> None:  # fmt: skip
    export(seeded, "script-html", tmp_path / "script.html")
    page = (tmp_path / "script.html").read_text(encoding="utf-8")
    assert "<title>末班车之前</title>" in page
    # start.txt first, each scene a section the choices and jumps link to.
    assert page.index('id="scene-start.txt"') < page.index('id="scene-station_en.txt"')
    assert 'href="#scene-station_en.txt"' in page and 'href="#scene-station_zh.txt"' in page
    assert "6:40 in the evening. The sunset had turned the rails orange." in page
    assert '<span class="speaker">Mio</span>' in page
    assert "Are you waiting for the last train too?" in page
    # A choice's option jumping to a label links to that label in its scene.
    assert 'href="#label-station_en.txt-askMaster"' in page and 'id="label-station_en.txt-askMaster"' in page
    # Script markup is never page markup.
    (seeded / "game" / "scene" / "start.txt").write_text(":<img src=x onerror=alert(1)>;\n")
    export(seeded, "script-html", tmp_path / "escaped.html")
    assert "<img src=x" not in (tmp_path / "escaped.html").read_text(encoding="utf-8")


@CHROMIUM
def test_the_script_as_pdf_holds_the_lines(seeded: Path, tmp_path: Path) -> None:
    from pypdf import PdfReader

    export(seeded, "script-pdf", tmp_path / "script.pdf")
    text = " ".join(page.extract_text() for page in PdfReader(str(tmp_path / "script.pdf")).pages)
    text = " ".join(text.split())
    assert "6:40 in the evening. The sunset had turned the rails orange." in text
    assert "Are you waiting for the last train too?" in text
    # A Chinese game prints in Chinese on a machine without Chinese fonts:
    # the PDF borrows the engine's own (when the engine is set up).
    if engine_font():
        assert "美绪" in text and "结束" in text


def test_export_list_names_the_webgal_formats(seeded: Path) -> None:
    listed = CliRunner().invoke(cli, ["export", "--mode", "webgal", "-w", str(seeded), "--list"])
    assert listed.exit_code == 0, listed.output
    assert "has no export" not in listed.output
    for fmt in ("web", "script-html", "script-pdf"):
        assert fmt in listed.output


def test_the_zip_is_readable_by_pythons_own_zipfile(seeded: Path, engine: Path, tmp_path: Path) -> None:
    export(seeded, "web", tmp_path / "game.zip")
    data = (tmp_path / "game.zip").read_bytes()
    assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None



async def test_the_export_menu_offers_the_build_and_downloads_the_zip(
        seeded: Path, engine: Path) -> None:  # fmt: skip
    from pneuma.testing import serve

    async with serve("webgal", seeded, backend="none", watch=False) as server:
        listed = await (await server.get("/api/export")).json()
        assert [f["name"] for f in listed["formats"]] == ["web", "script-html", "script-pdf"]
        assert listed["formats"][0]["label"]["zh-CN"] == "可游玩的网页版（.zip）"
        response = await server.get("/api/export/web")
        assert response.status == 200 and response.headers["Content-Type"] == "application/zip"
        build = zipfile.ZipFile(io.BytesIO(await response.read()))
        assert build.read("game/scene/start.txt") == (seeded / "game" / "scene" / "start.txt").read_bytes()

        (seeded / "game" / "scene" / "start.txt").unlink()
        refused = await server.get("/api/export/script-html")
        error = (await refused.json())["error"]
        assert (refused.status, error["code"]) == (409, "E_CONFLICT")
        assert "game/scene/start.txt" in error["message"] and str(seeded) not in error["message"]
