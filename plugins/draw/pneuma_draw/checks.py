"""The draw mode's check after every turn (docs/checks.md): the drawing
check the skill ships to the agent (skill/scripts/check_drawing.py), run in
this process on every ``.excalidraw`` file the turn changed. Its errors
(invalid JSON, one-sided bindings, missing ids: what makes Excalidraw
misbehave) fail the turn; its warnings (an arrow end far from its shape,
text wider than its box) are shown without failing it.

The script is the skill's (the agent runs it as ``python3
check_drawing.py FILE``), not a module of this package: it is loaded from
its file once, so both run the same code.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from pneuma.api import CheckRequest, Problem, Sandbox, ToolError, TurnCheck

CHECK_SCRIPT = Path(__file__).parent / "skill" / "scripts" / "check_drawing.py"
MAX_DRAWING_BYTES = 50 * 1024 * 1024  # embedded images make drawings large
MAX_PROBLEMS_PER_FILE = 20
# The script's messages start with the element they are about: "'rect-1': ...".
_ELEMENT = re.compile(r"^'([^']+)': ")


@functools.cache
def drawing_check() -> ModuleType:
    """The skill's check_drawing.py, loaded from its file."""
    spec = importlib.util.spec_from_file_location("pneuma_draw_skill_check_drawing", CHECK_SCRIPT)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {CHECK_SCRIPT}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_drawings(workspace: Path, changed: Sequence[str]) -> list[Problem]:
    """The drawing check's errors and warnings for each changed drawing."""
    sandbox = Sandbox(workspace)
    problems: list[Problem] = []
    for path in (p for p in changed if p.lower().endswith(".excalidraw")):
        try:
            data, _ = sandbox.read_bytes(path, MAX_DRAWING_BYTES)
        except FileNotFoundError:
            continue  # removed since the turn ended
        except (ToolError, OSError) as error:
            problems.append(Problem(f"{path} cannot be read: {getattr(error, 'message', error)}", file=path))
            continue
        if len(data) > MAX_DRAWING_BYTES:
            problems.append(Problem(f"{path} is over {MAX_DRAWING_BYTES // 2**20} MiB: not checked",
                                    file=path, severity="warning"))
            continue
        problems.extend(_problems_of(path, data)[:MAX_PROBLEMS_PER_FILE])
    return problems


def _problems_of(path: str, data: bytes) -> list[Problem]:
    try:
        parsed = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        return [Problem(f"{path}: not UTF-8 text", file=path)]
    except json.JSONDecodeError as error:
        # The same words as the script's, with the line to open.
        return [Problem(f"{path}: not valid JSON: line {error.lineno} column {error.colno}: {error.msg}",
                        file=path, line=error.lineno, locate={"file": path, "line": error.lineno})]
    errors, warnings = drawing_check().check_data(parsed)
    found = [(message, "error") for message in errors] + [(message, "warning") for message in warnings]
    text = data.decode("utf-8")
    problems: list[Problem] = []
    for message, severity in found:
        element = _ELEMENT.match(message)
        line = _line_of_element(text, element.group(1)) if element else None
        # As the draw describer's changes point at elements (changes.py).
        locate = {"file": path, "elementIds": [element.group(1)]} if element else {"file": path}
        problems.append(Problem(f"{path}: {message}", file=path, line=line,
                                severity="error" if severity == "error" else "warning", locate=locate))
    return problems


def _line_of_element(text: str, element_id: str) -> int | None:
    """The line where the element with this id is declared, or None."""
    found = re.search(r'"id"\s*:\s*' + re.escape(json.dumps(element_id)), text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _run(request: CheckRequest) -> list[Problem]:
    return check_drawings(request.workspace, request.changed)


CHECKS = [TurnCheck(mode="draw", name="drawing",
                    label={"en": "Drawing check", "zh-CN": "绘图检查"}, run=_run)]
