"""``python -m pneuma.mode_sources.probe DISTRIBUTION``: load the modes of one
distribution in a fresh interpreter, as ``pneuma run`` would, and print JSON.

A fresh process is the honest test of an install: the installing process has
already imported its packages and read the environment's metadata, so it
could see a mode that no later ``pneuma`` would, or miss one (a new ``.pth``).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def probe(distribution: str) -> dict[str, Any]:
    from pneuma.host.plugins import get_plugin_manager
    from pneuma.host.registry import load_modes
    from pneuma.mode_sources.wheel_metadata import canonical_name

    wanted = canonical_name(distribution)

    def ours(name: str | None) -> bool:
        return name is not None and canonical_name(name) == wanted

    registry = load_modes(get_plugin_manager())
    return {
        "modes": [{"name": mode.name, "package": str(mode.package_dir)}
                  for mode in registry.modes.values() if ours(mode.distribution)],
        "errors": [f"{error.plugin}: {error.error}"
                   for error in registry.errors if ours(error.distribution)],
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m pneuma.mode_sources.probe DISTRIBUTION", file=sys.stderr)
        return 2
    print(json.dumps(probe(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
