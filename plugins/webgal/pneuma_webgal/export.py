"""The webgal mode's ``Exporter`` (``register_exporters``, docs/hooks.md):

``web``
    The game as a playable web build, one zip: the pinned engine (the same
    ``dist/`` the preview serves, engine.py) at the root and the game's files
    under ``game/``, the layout the engine reads (``./game/config.txt``,
    ``./game/scene/start.txt``, …). Unpacked and served by any static file
    server, ``index.html`` plays the game. The engine still tries the
    editor-sync socket ``/api/webgalsync`` it opens by itself; on a plain
    server that fails, and the engine only logs that no editor is connected.
    Only what the game uses goes in (game_files.py): every scene, config.txt's
    and the scenes' resources, animations, templates; the rest is named in a
    warning. The zip is the same bytes for the same game (sorted names, fixed
    times), so publishing it again changes nothing.
``script-html`` / ``script-pdf``
    Every scene as a readable script (script_page.py): speakers and lines,
    choices and scene jumps as links; the PDF is that page printed by
    ``pneuma.api.html_to_pdf``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from pneuma.api import Exporter, ExportError, ExportFormat, ExportRequest, ExportResult

from .engine import engine_dir, engine_version
from .game_files import GameFiles, game_files, read_config, scene_files

# Files of the engine's dist/ a static server does not need: the precompressed
# copies (a plain server sends the originals) and any sample game.
_ENGINE_SKIPPED_SUFFIXES = (".gz", ".br")
_ENGINE_SKIPPED_DIRS = ("game/",)
# Already compressed: deflating them again costs time and saves nothing.
_STORED_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".gif", ".avif", ".mp3", ".ogg",
                              ".m4a", ".aac", ".opus", ".mp4", ".webm", ".woff", ".woff2", ".zip"})
# A zip's earliest time: every entry carries it, so the bytes depend on the contents only.
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_WARNED_NAMES = 8  # names listed in one warning; the rest are counted

README = """{title}

A WebGAL game exported by Pneuma: the WebGAL engine {version} and the game.

To play it, serve this folder with any static file server and open its
address in a browser, for example:

    python3 -m http.server 8000
    (then open http://127.0.0.1:8000/)

Opening index.html straight from the disk does not work: the engine loads
the game's files over HTTP. The game is in game/ (scenes in game/scene/,
start.txt first); the engine's files are everything else. Any host that
serves static files serves it too (GitHub Pages, Codeberg Pages, a web
server's folder).
"""


def _require_start_scene(workspace: Path) -> Path:
    game = workspace / "game"
    if not (game / "scene" / "start.txt").is_file():
        raise ExportError(f"{workspace} has no game to export: game/scene/start.txt, where the game "
                          "starts, does not exist")
    return game


def _engine_files(engine: Path) -> Iterator[tuple[str, Path]]:
    """(name in the zip, file) of the engine's dist/, sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(engine):
        dirnames.sort()
        for name in filenames:
            path = Path(dirpath, name)
            rel = path.relative_to(engine).as_posix()
            if name.endswith(_ENGINE_SKIPPED_SUFFIXES) or rel.startswith(_ENGINE_SKIPPED_DIRS):
                continue
            found.append((rel, path))
    return iter(sorted(found))


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
    info.create_system = 3  # unix: the permission bits below are read as such
    info.external_attr = 0o100644 << 16
    stored = Path(name).suffix.lower() in _STORED_SUFFIXES
    info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    return info


def _add_file(archive: zipfile.ZipFile, name: str, fd: int) -> None:
    with os.fdopen(fd, "rb") as source:
        info = _entry(name)
        # Its size known up front, the entry takes zip64 fields only when it needs them.
        info.file_size = os.fstat(source.fileno()).st_size
        with archive.open(info, "w") as target:
            shutil.copyfileobj(source, target, 1 << 20)


def _write_zip(output: Path, engine: Path, files: GameFiles, readme: str) -> None:
    """The zip, written beside ``output`` and moved over it once complete,
    so a failed export never leaves half a zip where a good one was."""
    entries: list[tuple[str, Path | None]] = [("README.txt", None), *_engine_files(engine),
                                              *((f"game/{rel}", None) for rel in files.included)]
    entries.sort(key=lambda item: item[0])
    fd, temp = tempfile.mkstemp(prefix=".webgal-export-", suffix=".zip", dir=output.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(temp, "w", compresslevel=6) as archive:
            for name, path in entries:
                if name == "README.txt":
                    archive.writestr(_entry(name), readme.encode("utf-8"))
                elif path is not None:
                    _add_file(archive, name, os.open(path, os.O_RDONLY))
                else:
                    _add_file(archive, name, files.open(name.removeprefix("game/")))
        os.chmod(temp, 0o644)  # mkstemp's 0600 would keep the build from a web server's user
        os.replace(temp, output)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def export_web(request: ExportRequest) -> ExportResult:
    game = _require_start_scene(request.workspace)
    engine = engine_dir()
    if engine is None:
        raise ExportError("the WebGAL engine is not set up, so there is no engine to put in the build",
                          code="E_UNAVAILABLE", hint="run scripts/build-web in the Pneuma checkout")
    files = game_files(game)
    version = engine_version(engine) or "(unknown version)"
    title = read_config(game).get("Game_name") or request.workspace.name
    _write_zip(request.output, engine, files, README.format(title=title, version=version))
    return ExportResult(files=[request.output], warnings=_warnings(files),
                        summary=f"{len(files.scenes)} scenes, {len(files.included)} game files "
                                f"and the WebGAL engine {version}")


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:_WARNED_NAMES])
    more = len(items) - _WARNED_NAMES
    return shown + (f" and {more} more" if more > 0 else "")


def _warnings(files: GameFiles) -> list[str]:
    warnings = [f"{where} names {what}, which is not in game/: the game will miss it"
                for where, what in files.missing[:_WARNED_NAMES]]
    if len(files.missing) > _WARNED_NAMES:
        warnings.append(f"and {len(files.missing) - _WARNED_NAMES} more missing files")
    if files.unused:
        warnings.append(f"left out {len(files.unused)} file(s) of game/ that no scene or config.txt "
                        f"uses: {_names(files.unused)}")
    return warnings


def export_script(request: ExportRequest) -> ExportResult:
    from .script_page import fallback_font_css, script_page

    game = _require_start_scene(request.workspace)
    scenes = scene_files(game)
    language = str(request.params.get("language") or "")
    if request.format == "script-html":
        request.output.write_text(script_page(game, scenes, language), encoding="utf-8")
    else:
        from pneuma.api import html_to_pdf

        page = script_page(game, scenes, language, font_css=fallback_font_css(_engine_cjk_font()))
        with tempfile.TemporaryDirectory(prefix="pneuma-webgal-script-") as scratch:
            html_file = Path(scratch) / "script.html"
            html_file.write_text(page, encoding="utf-8")
            html_to_pdf(html_file, request.output, name="the script", items=max(1, len(scenes)))
    return ExportResult(files=[request.output], summary=f"{len(scenes)} scenes")


def _engine_cjk_font() -> Path | None:
    """The engine's Source Han Serif, if the engine is set up."""
    engine = engine_dir()
    fonts = sorted((engine / "assets").glob("SourceHanSerifCN-*.ttf")) if engine else []
    return fonts[0].resolve() if fonts else None


def export(request: ExportRequest) -> ExportResult:
    if request.format == "web":
        return export_web(request)
    return export_script(request)


def default_name(workspace: Path) -> str:
    """The game's name from config.txt, else the workspace folder's."""
    return read_config(workspace / "game").get("Game_name") or workspace.name


EXPORTER = Exporter(
    mode="webgal",
    formats=[
        ExportFormat("web", {"en": "Playable web build (.zip)", "zh-CN": "可游玩的网页版（.zip）"}, ".zip"),
        ExportFormat("script-html", {"en": "Script (HTML)", "zh-CN": "剧本（HTML）"}, ".html"),
        ExportFormat("script-pdf", {"en": "Script (PDF)", "zh-CN": "剧本（PDF）"}, ".pdf"),
    ],
    export=export,
    default_name=default_name,
    site_format="web",  # `pneuma publish` puts the playable build on a target
)
