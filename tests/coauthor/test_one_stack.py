"""CoAuthor runs on the host's one stack: it reaches the host only through
``pneuma.api``, and has no file watcher, Anthropic client or long-poll
route of its own (the host's watcher, LLM gateway and broadcast serve it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pneuma_coauthor

PACKAGE = Path(pneuma_coauthor.__file__).resolve().parent


def imported_modules() -> dict[str, set[str]]:
    """Every module each source file imports (at any depth, TYPE_CHECKING included)."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
        found[path.relative_to(PACKAGE).as_posix()] = names
    return found


def test_the_host_is_reached_through_pneuma_api_only():
    for rel, names in imported_modules().items():
        host = {n for n in names if n == "pneuma" or n.startswith("pneuma.")}
        assert host <= {"pneuma.api"}, f"{rel} imports {sorted(host - {'pneuma.api'})}"


def test_no_watcher_or_model_client_of_its_own():
    for rel, names in imported_modules().items():
        roots = {n.split(".")[0] for n in names}
        assert not roots & {"watchfiles", "anthropic", "httpx"}, f"{rel} imports {sorted(roots & {'watchfiles', 'anthropic', 'httpx'})}"
    routes = (PACKAGE / "routes.py").read_text("utf-8")
    assert "/events" not in routes  # the viewer gets events as broadcasts, not by polling
