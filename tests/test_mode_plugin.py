"""``pneuma.api.ModePlugin``: a mode package that declares its hooks in one
call is loaded, listed, served and given its commands like one that writes
each ``@hookimpl`` function itself."""

from __future__ import annotations

import json
import sys
import uuid

import pytest
from click.testing import CliRunner

from pneuma.api import ModePlugin
from pneuma.cli import cli
from pneuma.host.plugins import build_plugin_manager
from pneuma.host.registry import get_mode, get_plugins

INIT = """\
from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, routes=".routes:board_routes", commands=[".cli:board"])
register_modes = plugin.register_modes
register_routes = plugin.register_routes
register_commands = plugin.register_commands
"""

ROUTES = """\
from aiohttp import web


def board_routes(pneuma):
    async def board(request):
        return web.json_response({"mode": pneuma.mode.name})

    return [web.get("/api/board", board)]
"""

CLI = """\
import click


@click.command("board")
def board():
    \"\"\"Show the board.\"\"\"
    click.echo("the board")
"""


@pytest.fixture
def board_package(tmp_path, monkeypatch, minimal_manifest, make_mode_package):
    """An importable package (a fresh name per test) whose ``__init__`` is
    ``INIT``, beside manifest.json, skill/, seeds/, routes.py and cli.py."""
    name = f"board{uuid.uuid4().hex[:8]}"
    package = make_mode_package(tmp_path, minimal_manifest(name))
    for file, text in {"__init__.py": INIT, "routes.py": ROUTES, "cli.py": CLI}.items():
        (package / file).write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, package
    for module in [m for m in sys.modules if m == package.name or m.startswith(f"{package.name}.")]:
        del sys.modules[module]


def test_the_mode_loads_from_the_package_directory(pm, register_plugin, board_package):
    name, package = board_package
    module = __import__(package.name)
    with register_plugin(module, "board-plugin"):
        mode = get_mode(name, pm)
        assert mode.package_dir == package.resolve()
        assert mode.skill_dir == package.resolve() / "skill"
        listed = {p["name"]: p for p in get_plugins(pm)}["board-plugin"]
        assert listed["hooks"] == ["register_commands", "register_modes", "register_routes"]
        # Knowing the mode imported neither its server code nor its CLI.
        assert f"{package.name}.routes" not in sys.modules
        assert f"{package.name}.cli" not in sys.modules


def test_the_module_offers_only_the_hooks_it_assigns(pm, register_plugin, board_package):
    name, package = board_package
    (package / "__init__.py").write_text(
        "from pneuma.api import ModePlugin\n\nregister_modes = ModePlugin(__name__).register_modes\n",
        encoding="utf-8")
    with register_plugin(__import__(package.name), "modes-only"):
        assert get_mode(name, pm).package_dir == package.resolve()
        listed = {p["name"]: p for p in get_plugins(pm)}["modes-only"]
        assert listed["hooks"] == ["register_modes"]


def test_another_manifest_file_can_be_named(pm, register_plugin, board_package, minimal_manifest):
    name, package = board_package
    (package / "board.json").write_text(json.dumps(minimal_manifest(f"{name}x")), encoding="utf-8")
    __import__(package.name)
    with register_plugin(ModePlugin(package.name, manifest="board.json"), "other-manifest"):
        assert get_mode(f"{name}x", pm).package_dir == package.resolve()


def test_its_commands_join_the_cli(pm, register_plugin, board_package, monkeypatch):
    monkeypatch.setattr(cli, "_plugins_added", False)
    monkeypatch.setattr(cli, "commands", dict(cli.commands))
    _, package = board_package
    with register_plugin(__import__(package.name), "board-plugin"):
        runner = CliRunner()
        assert "Show the board." in runner.invoke(cli, ["--help"]).stdout
        result = runner.invoke(cli, ["board"])
        assert result.exit_code == 0 and result.stdout == "the board\n"


async def test_its_routes_are_served_behind_the_token(pm, register_plugin, board_package,
                                                      workspace, aiohttp_client):
    from pneuma.server.app import ServerConfig, create_app
    from pneuma.server.session import Session

    name, package = board_package
    with register_plugin(__import__(package.name), "board-plugin"):
        mode = get_mode(name, pm)
        session = Session("s-board", mode=name, workspace=workspace, backend_name="none")
        config = ServerConfig(mode=mode, workspace=workspace, token="t0k", session=session,
                              watch=False)
        client = await aiohttp_client(create_app(config))
        config.port = client.port  # the Host check needs the bound port
        answer = await client.get("/api/board", headers={"Authorization": "Bearer t0k"})
        assert answer.status == 200 and await answer.json() == {"mode": name}
        assert (await client.get("/api/board")).status == 401


@pytest.mark.parametrize("reference", ["routes.board_routes", ":board_routes", "routes:"])
def test_a_reference_that_is_not_module_attribute_fails_when_the_plugin_loads(reference):
    with pytest.raises(ValueError, match="is not a 'module:attribute' reference"):
        ModePlugin("anything", routes=reference)
    with pytest.raises(ValueError, match="is not a 'module:attribute' reference"):
        ModePlugin("anything", commands=[reference])


def test_the_built_in_modes_offer_the_hooks_they_did_before():
    hooks = {p["name"]: p["hooks"] for p in get_plugins(build_plugin_manager())}
    # (issue 28 adds hooks beside them: a mode's change describer, its after-turn checks)
    assert {"register_change_describers", "register_commands", "register_modes",
            "register_routes"} <= set(hooks["coauthor"])
    # `pneuma export` moved from slide's own command to the export hook (issue 18).
    for mode in ("slide", "doc", "draw"):
        assert {"register_change_describers", "register_exporters", "register_modes"} <= set(hooks[mode])
