"""``register_plugin``: a plugin object registered for the length of a block.

The quickest way to try a hook, and how a plugin's tests check one: a small
class with ``@hookimpl`` methods joins the process-wide plugin manager (the
one ``pneuma run``, the CLI and ``serve`` use), and leaves it again however
the block ends. The modes cache is cleared on the way in and out, so a mode
the plugin provides appears, and then disappears.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from pneuma.host.plugins import get_plugin_manager
from pneuma.host.registry import clear_cache

Plugin = TypeVar("Plugin")


@contextmanager
def register_plugin(plugin: Plugin, name: str) -> Iterator[Plugin]:
    """Register ``plugin`` under ``name`` until the block ends."""
    manager = get_plugin_manager()
    manager.register(plugin, name=name)
    clear_cache()
    try:
        yield plugin
    finally:
        manager.unregister(name=name)
        clear_cache()
