"""``pneuma.api`` is the front door: modes, the template and the native
backend use nothing else of the host, every name it exports is documented
and resolves, and a name on its way out warns before it goes.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import pneuma.api as api
import pneuma.mode_check.imports as mode_imports
import pneuma.testing as testing

REPO = Path(__file__).resolve().parent.parent
API_DOC = REPO / "docs" / "api.md"
# Code that must reach the host only through pneuma.api (and, in its tests,
# pneuma.testing): what a third-party mode or backend could be.
PLUGIN_TREES = [REPO / "plugins", REPO / "templates", REPO / "pneuma" / "agents" / "native",
                REPO / "pneuma" / "agents" / "codex", REPO / "pneuma" / "agents" / "acp"]
_SKIP_DIRS = {"node_modules", "__pycache__", ".venv", "venv", "build", "dist", ".git"}


# --- the boundary -------------------------------------------------------------------


def plugin_files() -> Iterator[Path]:
    for tree in PLUGIN_TREES:
        for path in sorted(tree.rglob("*.py")):
            if not _SKIP_DIRS.intersection(path.relative_to(tree).parts):
                yield path


def own_package(path: Path) -> list[str]:
    """The dotted package ``path`` belongs to, as its relative imports see it."""
    backends = (REPO / "pneuma" / "agents" / "native", REPO / "pneuma" / "agents" / "codex",
                REPO / "pneuma" / "agents" / "acp")
    if any(path.is_relative_to(backend) for backend in backends):
        root = REPO
    elif path.is_relative_to(REPO / "plugins"):
        root = REPO / "plugins" / path.relative_to(REPO / "plugins").parts[0]
    else:  # a template: relative to the template's own directory
        root = REPO / "templates" / path.relative_to(REPO / "templates").parts[0]
    return list(path.parent.relative_to(root).parts)


def boundary_violations(path: Path) -> list[str]:
    # The rule itself is `pneuma mode check`'s `imports` check (one implementation
    # for the built-in modes here and any mode a person installs).
    return mode_imports.boundary_violations(path, own_package(path), str(path.relative_to(REPO)))


def test_plugins_the_template_and_the_native_backend_use_only_pneuma_api():
    problems = [problem for path in plugin_files() for problem in boundary_violations(path)]
    assert problems == [], (
        "outside the host, import only pneuma.api (and pneuma.testing in tests); a name "
        "pneuma.api lacks is added there and to docs/api.md:\n" + "\n".join(problems))


def test_the_boundary_check_sees_every_way_in(tmp_path: Path, monkeypatch):
    # A stand-in checkout with one file per way of reaching the host.
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PLUGIN_TREES",
                        [tmp_path / "plugins", tmp_path / "pneuma" / "agents" / "native"])
    sources = {
        "plugins/probe/pneuma_probe/ok.py":
            "from pneuma.api import ToolError\nimport pneuma.api as api\nfrom . import ok\n",
        "plugins/probe/pneuma_probe/bad_from.py": "from pneuma import hookimpl\n",
        "plugins/probe/pneuma_probe/bad_module.py": "from pneuma.core.errors import ToolError\n",
        "plugins/probe/pneuma_probe/bad_import.py": "import pneuma.server.config\n",
        "plugins/probe/pneuma_probe/bad_bare.py": "import pneuma\n",
        "plugins/probe/pneuma_probe/bad_dynamic.py":
            "import importlib\nimportlib.import_module('pneuma.host.registry')\n",
        "plugins/probe/pneuma_probe/bad_testing.py": "from pneuma.testing import tool_context\n",
        "plugins/probe/tests/test_ok.py":
            "from pneuma.testing import tool_context\nfrom pneuma.api import Sandbox\n",
        "plugins/probe/tests/test_bad.py": "from pneuma.testing.server import serve\n",
        "pneuma/agents/native/ok.py": "from .backend import NativeBackend\nfrom . import tools\n",
        "pneuma/agents/native/bad_up.py": "from ..base import BackendSpec\n",
        "pneuma/agents/native/bad_own_absolute.py": "from pneuma.agents.native import tools\n",
    }
    for rel, text in sources.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = {path.relative_to(tmp_path).as_posix(): boundary_violations(path)
             for path in plugin_files()}
    assert sorted(rel for rel, problems in found.items() if problems) == sorted(
        rel for rel in sources if "/bad_" in rel or "test_bad" in rel)
    assert found["plugins/probe/pneuma_probe/bad_from.py"] == [
        "plugins/probe/pneuma_probe/bad_from.py:1: imports pneuma.hookimpl (use pneuma.api)"]
    assert found["pneuma/agents/native/bad_up.py"] == [
        "pneuma/agents/native/bad_up.py:1: imports pneuma.agents.base (use pneuma.api)"]
    assert found["pneuma/agents/native/bad_own_absolute.py"] == [
        "pneuma/agents/native/bad_own_absolute.py:1: imports pneuma.agents.native "
        "(use a relative import inside the package)"]


# --- every name documented and resolving -----------------------------------------------


def documented_names() -> tuple[set[str], set[str]]:
    """Names with a row of their own (``| `name` | ...``) in docs/api.md: the
    API reference part, and the "Testing a mode" part."""
    text = API_DOC.read_text(encoding="utf-8")
    reference, _, testing_part = text.partition("\n## Testing a mode")
    row = re.compile(r"^\|\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*\|", re.MULTILINE)
    return set(row.findall(reference)), set(row.findall(testing_part))


def test_every_name_of_pneuma_api_is_documented():
    reference, _ = documented_names()
    assert sorted(set(api.__all__) - reference) == [], "names without a row in docs/api.md"
    assert sorted(reference - set(api.__all__)) == [], "docs/api.md documents names pneuma.api lacks"


def test_every_name_of_pneuma_testing_is_documented():
    _, documented = documented_names()
    assert sorted(set(testing.__all__) - documented) == [], \
        "pneuma.testing names without a row under 'Testing a mode' in docs/api.md"
    assert sorted(documented - set(testing.__all__)) == []


def test_the_doc_states_the_compatibility_promise():
    text = " ".join(API_DOC.read_text(encoding="utf-8").split())
    assert "API_VERSION" in text and "semantic versioning" in text.lower()
    assert "DeprecationWarning" in text
    assert "nothing outside `pneuma.api` and `pneuma.testing` is promised" in text.lower()


def test_every_name_resolves():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in api.__all__:
            if name in api._DEPRECATED:
                with pytest.warns(DeprecationWarning):
                    getattr(api, name)
            else:
                assert getattr(api, name) is not None, name
    assert sorted(dir(api)) == sorted(api.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        api.Nope  # noqa: B018


def test_type_checkers_see_what_run_time_gives():
    # The TYPE_CHECKING block of pneuma/api.py imports exactly the exported
    # names, from where _EXPORTS says they live.
    tree = ast.parse((REPO / "pneuma" / "api.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and ast.unparse(node.test) == "TYPE_CHECKING")
    seen = {}
    for node in ast.walk(block):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                seen[alias.asname or alias.name] = f"{node.module}:{alias.name}"
    assert seen == api._EXPORTS


def test_importing_pneuma_api_loads_nothing_else():
    # Every plugin imports pneuma.api when its entry point loads; that must
    # not pull the host in before `pneuma run` prints its ready line.
    code = "import sys, pneuma.api; print(sorted(m for m in sys.modules if m.startswith('pneuma')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['pneuma', 'pneuma.api']"


# --- deprecation -------------------------------------------------------------------------


def test_a_deprecated_name_keeps_working_and_warns_on_every_use(monkeypatch):
    current = api.content_hash
    with monkeypatch.context() as patch:
        patch.setitem(api._DEPRECATED, "content_hash", ("pneuma.api.read_text", "2.0.0"))
        patch.delitem(vars(api), "content_hash", raising=False)
        message = (r"pneuma\.api\.content_hash is deprecated and will be removed in "
                   r"pneuma\.api 2\.0\.0; use pneuma\.api\.read_text instead")
        with pytest.warns(DeprecationWarning, match=message) as caught:
            assert api.content_hash is current
        assert caught[0].filename == __file__  # it points at the code that used the name
        with pytest.warns(DeprecationWarning, match=message) as caught:
            from pneuma.api import content_hash
        assert content_hash is current and caught[0].filename == __file__
        assert "content_hash" not in vars(api)  # never cached, so the next use warns too
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert api.content_hash is current


def test_deprecations_name_a_replacement_and_a_later_major_version():
    major = int(api.API_VERSION.split(".")[0])
    for name, (replacement, removed_in) in api._DEPRECATED.items():
        assert name in api._EXPORTS, name
        assert replacement, name
        assert int(removed_in.split(".")[0]) > major, (name, removed_in)
