"""The `imports` check: a mode's Python reaches the host only through
``pneuma.api`` (and ``pneuma.testing`` in its tests), the rule of
docs/api.md that tests/test_api.py holds for the built-in modes with these
same functions.

Every form counts: ``import pneuma.x``, ``from pneuma import x`` (which
names ``pneuma.x``), ``from pneuma.x import y`` and
``importlib.import_module("pneuma.x")``. Relative imports are resolved
against the file's own package, so ``from . import tools`` inside the mode
is its own business.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from pneuma.mode_check.report import CheckResult

_DYNAMIC = {"importlib.import_module", "import_module", "__import__"}
_JINJA = re.compile(r"\{\{\s*cookiecutter\.(\w+)\s*\}\}")


def from_module(node: ast.ImportFrom, package: list[str]) -> str:
    """The absolute module of ``from <module> import ...``, a relative one
    resolved against ``package`` (the dotted parts of the importer's package)."""
    if not node.level:
        return node.module or ""
    base = package[:len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def is_test_file(path: Path) -> bool:
    return "tests" in path.parts or path.name.startswith("test_") or path.name == "conftest.py"


def pneuma_imports(source: str, package: list[str], filename: str = "<source>") -> Iterator[tuple[int, str, bool]]:
    """(line, module, relative) for every import naming a module of the
    ``pneuma`` distribution. Template files (Jinja) are read with
    ``{{ cookiecutter.x }}`` made a plain name."""
    tree = ast.parse(_JINJA.sub(lambda m: f"cookiecutter_{m.group(1)}", source), filename)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = from_module(node, package)
            targets = [f"pneuma.{a.name}" for a in node.names] if module == "pneuma" else [module]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str) and ast.unparse(node.func) in _DYNAMIC):
            targets = [node.args[0].value]
        else:
            continue
        for target in targets:
            if target == "pneuma" or target.startswith("pneuma."):
                yield node.lineno, target, isinstance(node, ast.ImportFrom) and node.level > 0


def boundary_violations(path: Path, package: list[str], where: str) -> list[str]:
    """``where:line: imports X (use Y)`` for each import of ``path`` past the
    front door; ``package``: the file's own dotted package parts; ``where``:
    the path as the project names it (relative to its root)."""
    # A test file by its place in the project (``where``), not by folders above it.
    allowed = {"pneuma.api", "pneuma.testing"} if is_test_file(Path(where)) else {"pneuma.api"}
    own = ".".join(package)
    problems = []
    for line, target, relative in pneuma_imports(path.read_text(encoding="utf-8"), package, str(path)):
        if target in allowed or (relative and (target == own or target.startswith(own + "."))):
            continue
        inside = bool(own) and (target == own or target.startswith(own + "."))
        hint = "a relative import inside the package" if inside else " or ".join(sorted(allowed))
        problems.append(f"{where}:{line}: imports {target} (use {hint})")
    return problems


def check_imports(root: Path, files: list[Path]) -> CheckResult:
    """The `imports` check over a mode project's Python files."""
    problems: list[str] = []
    unreadable: list[str] = []
    for path in files:
        rel = path.relative_to(root)
        try:
            problems += boundary_violations(path, list(rel.parent.parts), rel.as_posix())
        except (SyntaxError, UnicodeDecodeError) as exc:
            unreadable.append(f"{rel.as_posix()}: {exc}")
    if unreadable:
        return CheckResult("imports", False, f"{len(unreadable)} Python file(s) cannot be parsed: "
                           f"{unreadable[0]}", {"unparsable": unreadable, "imports": problems})
    if problems:
        return CheckResult("imports", False, f"imports past pneuma.api: {problems[0]}"
                           + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                           {"imports": problems})
    return CheckResult("imports", True, f"{len(files)} Python file(s) import only pneuma.api")
