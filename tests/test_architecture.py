"""The shape of the host's code: no import cycles in ``pneuma/``, and the
test helpers (``pneuma.testing``) never part of a running host.

The module graph is built from the source with ``ast``: every import
statement counts, at module level, under ``if TYPE_CHECKING:`` and inside
functions, with relative imports resolved. A cycle through a function-local
import still ties the two modules' designs together, so it counts too.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from tests.source_imports import from_module

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "pneuma"


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under ``package``."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """Every absolute name ``module`` imports, with its line; relative imports
    resolved. ``from a import b`` gives ``a.b``: ``b`` may be a module, and
    when it is not, ``most_specific`` falls back to ``a``."""
    is_package = path.name == "__init__.py"
    package_parts = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = from_module(node, package_parts)
            for alias in node.names:
                yield (base if alias.name == "*" else f"{base}.{alias.name}"), node.lineno


def most_specific(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` refers to: itself, or the nearest enclosing one."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(package: Path) -> dict[str, set[str]]:
    modules = module_files(package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for imported, _line in imported_names(name, path):
            target = most_specific(imported, modules)
            if target is not None and target != name:
                graph[name].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the groups of modules that import each
    other, directly or not; only groups of two or more."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def one_cycle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A shortest cycle through the group's first module, for the message."""
    start = group[0]
    members = set(group)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node] & members):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if child not in came_from:
                came_from[child] = node
                queue.append(child)
    return group


def test_the_cycle_finder_finds_a_cycle_through_a_function_local_import(tmp_path: Path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n")
    (package / "d.py").write_text("import pkg.a\n")
    graph = import_graph(package)
    [group] = strongly_connected(graph)
    assert group == ["pkg.a", "pkg.c", "pkg.sub.b"]
    assert one_cycle(graph, group) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]


def test_pneuma_has_no_import_cycles():
    graph = import_graph(PACKAGE)
    cycles = [" -> ".join(one_cycle(graph, group)) for group in strongly_connected(graph)]
    assert cycles == [], "import cycles in pneuma/ (every import counts, including " \
        "TYPE_CHECKING and function-local ones):\n" + "\n".join(cycles)


def test_the_host_never_imports_its_test_helpers():
    # pneuma.testing pulls in pytest and test-only code; a running host
    # must not depend on it, not even lazily.
    modules = module_files(PACKAGE)
    offenders = [
        f"{path.relative_to(REPO)}:{line}: imports {name}"
        for module, path in modules.items()
        if not (module == "pneuma.testing" or module.startswith("pneuma.testing."))
        for name, line in imported_names(module, path)
        if name == "pneuma.testing" or name.startswith("pneuma.testing.")
    ]
    assert offenders == []


# --- floors: an upper floor imports lower ones only (docs/architecture.md) ---

FLOORS: dict[str, int] = {
    # the ground floor: the error model, sandbox, files, state, filter,
    # channels, the backend contract; and the package's own root (hookimpl)
    "core": 0, "__init__": 0,
    # one idea per package
    "llm": 1, "host": 1, "workspace": 1, "tools": 1, "checkpoints": 1,
    # review pins: their store and routes, on core only (a host plugin)
    "annotations": 1,
    # the session's plumbing and the HTTP/WebSocket server
    "server": 2,
    # modes installed with pip from anywhere, and where each came from
    "mode_sources": 2,
    # a mode checked against the viewer contract: its own server and Chromium
    "mode_check": 2,
    # the one front door for modes and backends
    "api": 3,
    # backends, each owning its specifics; host features on the session's hooks
    "agents": 4, "editing": 4, "headless_viewer": 4, "turn_checks": 4,
    "replay": 4,  # a conversation played back turn by turn: a host plugin
    "publish": 4,  # publishing a result: a host plugin (pneuma.publish.plugin)
    "share": 4,  # a shared file: its data, builder, scrubbing, opening (pneuma.share)
    # starting and serving a workspace, for both front ends
    "startup": 5,
    # the front ends and the test helpers
    "launcher": 6, "cli": 6, "testing": 6, "__main__": 6,
}
MAX_IMPORTS_UP = 2


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def package_imports() -> dict[tuple[str, str], list[str]]:
    """(importer package, imported package) -> where, for every import
    between two packages of ``pneuma/`` (TYPE_CHECKING and function-local
    ones included)."""
    modules = module_files(PACKAGE)
    found: dict[tuple[str, str], list[str]] = {}
    for name, path in modules.items():
        for imported, line in imported_names(name, path):
            target = most_specific(imported, modules)
            if target is None or _package(target) == _package(name):
                continue
            found.setdefault((_package(name), _package(target)), []).append(
                f"{path.relative_to(REPO)}:{line} imports {target}")
    return found


def test_every_package_has_a_floor():
    packages = {_package(name) for name in module_files(PACKAGE)}
    assert sorted(packages - set(FLOORS)) == [], \
        "give the new package a floor in FLOORS (and a line in docs/architecture.md)"


def test_no_two_packages_import_each_other():
    edges = package_imports()
    mutual = sorted({tuple(sorted(pair)) for pair in edges if pair[::-1] in edges})
    assert mutual == [], "\n".join(
        f"{a} <-> {b}: " + "; ".join(edges[(a, b)][:2] + edges[(b, a)][:2]) for a, b in mutual)


def test_imports_run_down_the_floors():
    up = [where for (importer, imported), places in sorted(package_imports().items())
          if FLOORS.get(importer, 99) < FLOORS.get(imported, 99) for where in places]
    assert len(up) <= MAX_IMPORTS_UP, \
        f"{len(up)} imports run up a floor (at most {MAX_IMPORTS_UP}):\n" + "\n".join(up)


# --- sizes and names: features get rooms of their own -----------------------

MAX_PYTHON_LINES = 700
MAX_SESSION_LINES = 500
BACKEND_NAMES = ("claude-code", "codex", "native", "socket", "acp")
GENERIC_PACKAGES = ("cli", "launcher", "server", "startup")


def test_no_product_python_file_is_over_700_lines():
    long = sorted(
        f"{path.relative_to(REPO)}: {lines} lines"
        for path in [*PACKAGE.rglob("*.py"), *(REPO / "plugins").rglob("*.py")]
        if "node_modules" not in path.parts and "__pycache__" not in path.parts
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_PYTHON_LINES)
    assert long == [], "split these along their seams:\n" + "\n".join(long)


def test_the_session_keeps_only_the_message_plumbing():
    session = PACKAGE / "server" / "session.py"
    assert len(session.read_text(encoding="utf-8").splitlines()) < MAX_SESSION_LINES


def test_generic_code_compares_no_backend_name():
    """A backend's specifics live on its BackendSpec (pneuma.core.backend);
    the front ends and the server ask the spec, never the name."""
    import re

    compared = re.compile(r"""(==|!=|\bin\b)\s*[\(\[\{]?[^#\n]*["'](%s)["']"""
                          % "|".join(map(re.escape, BACKEND_NAMES)))
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for package in GENERIC_PACKAGES
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if compared.search(line.split("#", 1)[0])
    ]
    assert found == []


# -- product code cites only documents that are in the repository -------------------
# The seed design documents live outside the repository; their decisions are
# restated in docs/design/. A citation of a seed section ("§3.1", "ADR-002",
# "seed: agent-runtime") or of a docs/ page that does not exist points a reader
# at nothing.

import re as _citations_re  # noqa: E402 (kept with the test that uses it)

SEED_CITATION = _citations_re.compile(
    r"§|\bADR-\d|\badr-002\b|\bagent-runtime\b|\bcoauthor-v0\b|\bviewer-contract-v2\b"
    r"|\bwebgal-tool-contracts\b|\bpneuma-upstream\b|\breference README\b|\bseed:\s(?!int\b)|\bseed §",
    _citations_re.IGNORECASE,
)
# A docs/ path as code names it: not the tail of a URL or of another path.
DOCS_PATH = _citations_re.compile(r"(?<![\w./:-])docs/[\w./-]*[\w-]")
# Fetched bundles (.gitignore) and installed packages are not the project's prose.
NOT_PRODUCT_PROSE = {"node_modules", "vendor", "__pycache__", "engine"}
# Lines in files other engineers are rewriting for issue 24; each is to become a
# pointer into docs/design/ (the replacement is in the report). Remove an
# entry once its line is gone.
CITATIONS_BEING_REWRITTEN: dict[str, tuple[str, ...]] = {}


def product_source_files(repo: Path) -> Iterator[Path]:
    """Every .py and .js file of the product: the host, the built-in modes'
    packages and the templates."""
    roots = [repo / "pneuma", repo / "templates", *sorted((repo / "plugins").glob("*/pneuma_*"))]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".py", ".js") or not path.is_file():
                continue
            if NOT_PRODUCT_PROSE & set(path.relative_to(root).parts):
                continue
            yield path


def citations_of_missing_documents(repo: Path) -> list[str]:
    """``path:line: text`` for each line of product code that cites a seed
    document or a docs/ path the repository does not have."""
    found = []
    for path in product_source_files(repo):
        rel = path.relative_to(repo).as_posix()
        tolerated = CITATIONS_BEING_REWRITTEN.get(rel, ())
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if any(snippet in line for snippet in tolerated):
                continue
            missing_docs = [m for m in DOCS_PATH.findall(line) if not (repo / m.rstrip(".")).exists()]
            if SEED_CITATION.search(line) or missing_docs:
                found.append(f"{rel}:{number}: {line.strip()[:160]}")
    return found


def test_the_citation_check_finds_a_seed_section_and_a_missing_page(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "tools.md").write_text("# Tools\n")
    package = tmp_path / "pneuma"
    package.mkdir()
    (package / "ok.py").write_text('"""Policies (docs/tools.md, "Policies"); see docs/tools.md."""\n')
    (package / "seed.py").write_text('"""The error model (seed §0.2)."""\n')
    (package / "gone.py").write_text("# see docs/design/nowhere.md\n")
    (package / "vendor").mkdir()
    (package / "vendor" / "lib.js").write_text("// §1 of someone else's spec\n")
    assert citations_of_missing_documents(tmp_path) == [
        "pneuma/gone.py:1: # see docs/design/nowhere.md",
        'pneuma/seed.py:1: """The error model (seed §0.2)."""',
    ]


def test_product_code_cites_only_documents_in_the_repository():
    found = citations_of_missing_documents(REPO)
    assert not found, (
        "product code cites a document that is not in the repository; point it at "
        "docs/design/ or another page under docs/ instead:\n" + "\n".join(found)
    )
