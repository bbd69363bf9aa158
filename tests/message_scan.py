"""Reads the source for the browser socket's message types (issue 24, item 4).

``sent_types`` finds the ``"type"`` of every message the server builds for
a tab; ``handled_types`` the types a browser message handler declares.
Both read the source with ``ast`` rather than importing it, so they keep
working as the code moves between modules. ``protocol_table_types`` reads
docs/protocol.md's tables. Used by tests/test_message_catalogue.py and the
stress part.

What counts as sent (anywhere under ``pneuma/`` and the built-in modes):
a dict literal with a constant ``"type"`` given to one of ``SINKS``
(directly, through a local name it was assigned to, or returned by a
function called there: ``emit(event_message(e))``); one given to
``send(json.dumps({...}))``, which is how one tab gets its own reply; and
JSON text written out by hand that starts ``{"type":"…"``. The native
backend's extension socket (docs/native.md) sends ``send({...})`` without
``dumps``: a different protocol, not counted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Calls that put a message dict on the browser socket: the session's
# ``emit`` (the backends' sink), ``Pneuma.broadcast`` (modes), the
# channels' ``_broadcast``, the native backend's ``_emit`` and the
# watcher's ``notify``.
SINKS = frozenset({"emit", "_emit", "broadcast", "_broadcast", "notify", "send_json"})
# Calls that serialise a dict for one tab: ``tab.send(json.dumps({...}))``.
DUMPS = frozenset({"dumps", "_dumps"})
_HAND_WRITTEN = re.compile(r'^\{"type":"([a-z_]+)"')


def product_files() -> list[Path]:
    """Every product Python file: the host and the built-in modes."""
    files = sorted((ROOT / "pneuma").rglob("*.py"))
    for plugin in sorted((ROOT / "plugins").glob("*/pneuma_*")):
        files += sorted(plugin.rglob("*.py"))
    return [f for f in files if "tests" not in f.relative_to(ROOT).parts]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _dict_type(node: ast.AST) -> str | None:
    """The constant ``"type"`` of a dict literal, if it has one."""
    if not isinstance(node, ast.Dict):
        return None
    for key, value in zip(node.keys, node.values, strict=True):
        if (isinstance(key, ast.Constant) and key.value == "type"
                and isinstance(value, ast.Constant) and isinstance(value.value, str)):
            return value.value
    return None


@dataclass
class _Source:
    """The parsed files, with their functions by name (for ``f(...)`` given to a sink)."""

    trees: dict[Path, ast.Module] = field(default_factory=dict)
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = field(default_factory=dict)

    @classmethod
    def read(cls, files: list[Path]) -> _Source:
        source = cls()
        for path in files:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            source.trees[path] = tree
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    source.functions.setdefault(node.name, []).append(node)
        return source

    def returned_types(self, call: ast.Call, depth: int = 0) -> set[str]:
        """The message types a function called here returns (a dict, a list
        of them, or what another such function returns)."""
        name = _name(call.func)
        if name is None or depth > 3:
            return set()
        found: set[str] = set()
        for function in self.functions.get(name, []):
            for node in ast.walk(function):
                if isinstance(node, ast.Return) and node.value is not None:
                    found |= self._value_types(node.value, depth + 1)
        return found

    def _value_types(self, value: ast.expr, depth: int) -> set[str]:
        kind = _dict_type(value)
        if kind is not None:
            return {kind}
        if isinstance(value, ast.List | ast.Tuple):
            return set().union(*(self._value_types(v, depth) for v in value.elts))
        if isinstance(value, ast.Call) and _name(value.func) not in DUMPS:
            return self.returned_types(value, depth)
        return set()


def _local_bindings(function: ast.AST) -> dict[str, list[ast.expr]]:
    """What each local name is bound to: ``x = {...}`` and ``for x in f(...)``."""
    bound: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.For | ast.AsyncFor) and isinstance(node.target, ast.Name):
            if isinstance(node.iter, ast.Call):
                bound.setdefault(node.target.id, []).append(node.iter)
    return bound


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _forwarders(source: _Source) -> frozenset[str]:
    """``SINKS`` and the functions that hand their first argument on to one
    (``ConfirmationChannel._ask(message, timeout)`` broadcasts ``message``)."""
    sinks = set(SINKS)
    while True:
        more = {name for name, defs in source.functions.items() if name not in sinks
                and any(_forwards_first(f, sinks) for f in defs)}
        if not more:
            return frozenset(sinks)
        sinks |= more


def _forwards_first(function: ast.FunctionDef | ast.AsyncFunctionDef, sinks: set[str]) -> bool:
    params = [a.arg for a in function.args.args if a.arg not in ("self", "cls")]
    if not params:
        return False
    for node in ast.walk(function):
        if (isinstance(node, ast.Call) and _name(node.func) in sinks and node.args
                and isinstance(node.args[0], ast.Name) and node.args[0].id == params[0]):
            return True
    return False


def _sent_in(scope: ast.AST, source: _Source, sinks: frozenset[str]) -> set[str]:
    bound = _local_bindings(scope) if not isinstance(scope, ast.Module) else {}
    found: set[str] = set()
    for node in ast.walk(scope):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name, arg = _name(node.func), node.args[0]
        if name == "send" and isinstance(arg, ast.Call) and _name(arg.func) in DUMPS and arg.args:
            name, arg = "send_json", arg.args[0]
        if name in sinks and isinstance(arg, ast.Call) and _name(arg.func) in DUMPS and arg.args:
            arg = arg.args[0]
        if name not in sinks:
            continue
        values = bound.get(arg.id, []) if isinstance(arg, ast.Name) else [arg]
        for value in values:
            found |= source._value_types(value, 0)
    return found


def _hand_written(tree: ast.Module) -> set[str]:
    """Types of messages written out as JSON text (the hot paths)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _HAND_WRITTEN.match(node.value)
            if match:
                found.add(match.group(1))
    return found


def sent_types(files: list[Path] | None = None) -> dict[str, set[str]]:
    """Every message type sent to a tab, with the files that send it."""
    source = _Source.read(product_files() if files is None else files)
    sinks = _forwarders(source)
    where: dict[str, set[str]] = {}
    for path, tree in source.trees.items():
        kinds = _hand_written(tree)
        for scope in _scopes(tree):
            kinds |= _sent_in(scope, source, sinks)
        for kind in kinds:
            where.setdefault(kind, set()).add(_shown(path))
    return where


def _constant_strings(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def handled_types(files: list[Path] | None = None, model_types: dict[str, str] | None = None,
                  ) -> dict[str, set[str]]:
    """Every browser message type something handles, with where: a
    feature's ``message_types = (...)`` (the session's registry), and the
    catalogue's models a handler tests with ``isinstance`` (``model_types``
    maps their class names to their types)."""
    where: dict[str, set[str]] = {}
    models = model_types or {}
    for path in product_files() if files is None else files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        rel = _shown(path)
        tuples = {t.id: v for t, v in _module_tuples(tree)}
        for kind in _declared(tree) | _isinstance_types(tree, models, tuples):
            where.setdefault(kind, set()).add(rel)
    return where


def _declared(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) and node.value else [])
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        for target in targets:
            name = _name(target)
            if name == "message_types" and value is not None:
                found |= set(_constant_strings(value) or [])
    return found


def _module_tuples(tree: ast.Module) -> Iterator[tuple[ast.Name, list[str]]]:
    """Module-level ``NAME = (ClassA, ClassB)``: the class names."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            names = [_name(e) for e in node.value.elts]
            if all(names):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        yield target, [n for n in names if n]


def _isinstance_types(tree: ast.Module, models: dict[str, str],
                      tuples: dict[str, list[str]]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _name(node.func) == "isinstance"
                and len(node.args) == 2):
            continue
        second = node.args[1]
        elts = second.elts if isinstance(second, ast.Tuple) else [second]
        for elt in elts:
            name = _name(elt)
            for cls in tuples.get(name or "", [name] if name else []):
                if cls in models:
                    found.add(models[cls])
    return found


_ROW = re.compile(r"^\|\s*(`[^|]*?)\s*\|")


def protocol_table_types(doc: Path, heading: str) -> list[str]:
    """The message types in the first column of the table under ``heading``."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    start = lines.index(heading)
    found: list[str] = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        match = _ROW.match(line)
        if match:
            found += re.findall(r"`([a-z_]+)`", match.group(1))
    return found


# ``send({ type: … })``, ``_rawSend({ type: … })``, and the messages built
# first as ``const message = { type: … }`` / ``const answer = …``.
_JS_SEND = re.compile(r"""(?:[sS]end\(|(?:const|let)\s+(?:message|answer)\s*=\s*)\{\s*type:\s*['"]([a-z_]+)['"]""")


def browser_sent_types() -> dict[str, set[str]]:
    """The types the page's own modules send on the socket
    (``send({ type: '…', … })``), with the files that send them."""
    where: dict[str, set[str]] = {}
    for folder in [ROOT / "pneuma" / "web", *sorted((ROOT / "pneuma" / "agents").glob("*/static"))]:
        for path in sorted(folder.rglob("*.js")):
            if {"node_modules", "vendor"} & set(path.relative_to(folder).parts):
                continue
            for kind in _JS_SEND.findall(path.read_text(encoding="utf-8")):
                where.setdefault(kind, set()).add(_shown(path))
    return where
