"""Every mode under plugins/ counts as built in when installed from its wheel
too (where the plugins/ folder is not on disk): the launcher's gallery and
`pneuma modes` mark it by its distribution's name."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pneuma.host.modes import BUILT_IN_DISTRIBUTIONS

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"


def test_every_plugin_distribution_is_known_as_built_in() -> None:
    names = {tomllib.loads((folder / "pyproject.toml").read_text())["project"]["name"]
             for folder in PLUGINS.iterdir() if (folder / "pyproject.toml").is_file()}
    assert len(names) == 12
    assert names == set(BUILT_IN_DISTRIBUTIONS)
