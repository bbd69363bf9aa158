"""Reading import statements from source, for the tests of what may import
what (tests/test_api.py: the plugin boundary; tests/test_architecture.py:
no import cycles)."""

from __future__ import annotations

import ast


def from_module(node: ast.ImportFrom, package: list[str]) -> str:
    """The absolute module of ``from <module> import ...``: a relative one
    (``from ..x import y``) is resolved against ``package``, the dotted
    parts of the package the importing file belongs to."""
    if not node.level:
        return node.module or ""
    base = package[:len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))
