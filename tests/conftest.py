"""Shared fixtures for the host's tests.

The mode packages under plugins/ are installed editable and may be half
written while other work is going on, so the plugin manager the tests use
loads only the ``slide`` entry point (``PNEUMA_LOAD_PLUGINS=slide``). Tests
about discovery itself build their own managers.

A test plugin is a small class with ``@hookimpl`` methods, registered for
the length of a ``with register_plugin(Plugin(), "name"):`` block.

Helpers are offered as fixtures (``make_mode_package``, ``snapshot``,
``mode_plugin``, ``seed_files``) rather than imported: the repository root
has a conftest.py of its own, so ``from conftest import ...`` would depend
on which one pytest imported last.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pneuma import hookimpl
from pneuma.host import registry as modes
from pneuma.host.modes import LoadedMode, ModeSource
from pneuma.host.plugins import (
    LOAD_PLUGINS_ENV,
    PneumaPluginManager,
    get_plugin_manager,
)
from pneuma.host.registry import reset_plugin_manager

REPO = Path(__file__).resolve().parent.parent
SLIDE_PACKAGE = REPO / "plugins" / "slide" / "pneuma_slide"
SLIDE_MANIFEST = SLIDE_PACKAGE / "manifest.json"

SKILL_MD = """---
name: {install_name}
description: Use this skill when working in a {name} workspace.
---
# {name}

Write notes as Markdown files; the viewer shows them as soon as they land.
"""

_MINIMAL: dict[str, Any] = {
    "name": "demo",
    "version": "1.0.0",
    "displayName": {"en": "Demo", "zh-CN": "演示"},
    "description": "a folder of Markdown notes",
    "skill": {"installName": "pneuma-demo"},
    "init": {"contentCheckPattern": "**/*.md", "seedFiles": {"seeds/": "."}},
    "viewerApi": {
        "workspace": {
            "type": "all",
            "multiFile": True,
            "ordered": False,
            "hasActiveFile": True,
        },
        "actions": [
            {
                "id": "open-file",
                "label": "Open file",
                "category": "navigate",
                "agentInvocable": True,
                "params": {
                    "file": {"type": "string", "description": "Note to show", "required": True}
                },
                "description": "Show a note in the viewer",
            },
            {
                "id": "zoom-reset",
                "label": "Reset zoom",
                "category": "ui",
                "agentInvocable": False,
                "description": "Reset the zoom level to 100 %",
            },
        ],
    },
}

SEED_FILES = {
    "welcome.md": "# Welcome\n\nThis is your first note.\n",
    "notes/ideas.md": "- an idea\n",
}


@pytest.fixture
def minimal_manifest() -> Callable[..., dict[str, Any]]:
    """``minimal_manifest(name="demo")``: a fresh, valid manifest dict
    (camelCase, as a mode author writes it) that a test may mutate."""

    def make(name: str = "demo") -> dict[str, Any]:
        manifest = copy.deepcopy(_MINIMAL)
        manifest["name"] = name
        manifest["skill"]["installName"] = f"pneuma-{name}"
        return manifest

    return make


def make_mode_package(
    tmp_path: Path, manifest: Mapping[str, Any], *, skill_md: str | None = None
) -> Path:
    """Create a mode package directory for ``manifest``: manifest.json,
    ``skill/SKILL.md`` and ``seeds/`` (welcome.md, notes/ideas.md). Returns it.
    Calling it again for the same mode name rewrites manifest.json (and
    SKILL.md when given) in the same directory."""
    package = tmp_path / f"pkg_{manifest['name']}"
    skill = package / manifest.get("skill", {}).get("sourceDir", "skill")
    skill.mkdir(parents=True, exist_ok=True)
    if skill_md is None and not (skill / "SKILL.md").exists():
        skill_md = SKILL_MD.format(
            name=manifest["name"], install_name=manifest["skill"]["installName"]
        )
    if skill_md is not None:
        (skill / "SKILL.md").write_text(skill_md, encoding="utf-8")
    for rel, text in SEED_FILES.items():
        target = package / "seeds" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (package / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return package


@pytest.fixture(name="make_mode_package")
def _make_mode_package_fixture() -> Callable[..., Path]:
    """``make_mode_package(tmp_path, manifest, skill_md=None)``, see above."""
    return make_mode_package


@pytest.fixture
def seed_files() -> dict[str, str]:
    """The seed files every package from make_mode_package has (path → text)."""
    return dict(SEED_FILES)


@pytest.fixture
def pm(monkeypatch: pytest.MonkeyPatch) -> Iterator[PneumaPluginManager]:
    """A fresh plugin manager holding the host's own plugins and ``slide``.

    It is also the process-wide manager, so the CLI (through CliRunner)
    sees exactly what the test registered."""
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "slide")
    reset_plugin_manager()
    manager = get_plugin_manager()  # build_plugin_manager(), kept as the global one
    yield manager
    reset_plugin_manager()


@pytest.fixture
def register_plugin(pm: PneumaPluginManager) -> Callable[..., contextlib.AbstractContextManager]:
    """``with register_plugin(plugin, "name"):`` registers a test plugin in
    ``pm`` for the block (try/finally), clearing the modes cache on entry
    and exit so the registry is rebuilt with (then without) it."""

    @contextlib.contextmanager
    def register(plugin: Any, name: str) -> Iterator[Any]:
        pm.register(plugin, name=name)
        modes.clear_cache()
        try:
            yield plugin
        finally:
            pm.unregister(name=name)
            modes.clear_cache()

    return register


class ManifestModePlugin:
    """A plugin providing one mode from a manifest dict (or JSON path)."""

    def __init__(self, manifest: Mapping[str, Any] | Path, package_dir: Path):
        self.manifest = manifest
        self.package_dir = package_dir

    @hookimpl
    def register_modes(self) -> list[ModeSource]:
        return [ModeSource(manifest=self.manifest, package_dir=self.package_dir)]


@pytest.fixture
def mode_plugin() -> type[ManifestModePlugin]:
    """``mode_plugin(manifest, package_dir)``: a plugin object providing one mode."""
    return ManifestModePlugin


@pytest.fixture
def add_mode(
    pm: PneumaPluginManager, tmp_path: Path
) -> Iterator[Callable[..., LoadedMode]]:
    """``add_mode(manifest)`` makes a package for ``manifest`` (unless
    ``package_dir`` is given), registers a plugin ``test-mode-<name>``
    providing it for the rest of the test, and returns the loaded mode.
    Adding a manifest with the same name again replaces the earlier one
    (a new version of the mode)."""
    registered: list[str] = []

    def add(manifest: Mapping[str, Any], *, package_dir: Path | None = None,
            skill_md: str | None = None) -> LoadedMode:
        if package_dir is None:
            package_dir = make_mode_package(tmp_path, manifest, skill_md=skill_md)
        name = f"test-mode-{manifest['name']}"
        if pm.has_plugin(name):
            pm.unregister(name=name)
        pm.register(ManifestModePlugin(copy.deepcopy(dict(manifest)), package_dir), name=name)
        registered.append(name)
        modes.clear_cache()
        return modes.get_mode(manifest["name"], pm)

    yield add
    for name in registered:
        if pm.has_plugin(name):
            pm.unregister(name=name)
    modes.clear_cache()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative POSIX path → bytes)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(name="snapshot")
def _snapshot_fixture() -> Callable[[Path], dict[str, bytes]]:
    """``snapshot(root)``: every file under root, relative POSIX path → bytes."""
    return snapshot
