"""A freshly generated mode (`pneuma new-mode`'s template) in a folder, and
the small breakages the checks must name."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pneuma.cli.newmode import create_mode


def generated_mode(where: Path, name: str = "probemode") -> Path:
    """The project folder (pyproject.toml and pneuma_<name>/) of a new mode."""
    return create_mode(name, where)


def package_of(project: Path) -> Path:
    return next(p.parent for p in project.glob("*/manifest.json"))


def edit_manifest(project: Path, change) -> None:
    path = package_of(project) / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")


def drop_chinese_action_label(project: Path) -> None:
    def change(manifest: dict) -> None:
        del manifest["viewerApi"]["actions"][0]["label"]["zh-CN"]
    edit_manifest(project, change)


def import_past_the_api(project: Path) -> int:
    """Plant ``from pneuma.core.errors import ToolError`` in tools.py; its line."""
    tools = package_of(project) / "tools.py"
    text = tools.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\nfrom ")
    tools.write_text(head + "\nfrom pneuma.core.errors import ToolError  # noqa: F401" + sep + rest,
                     encoding="utf-8")
    return head.count("\n") + 2


def break_action(project: Path, how: str = "throw") -> None:
    """Make the viewer's show-file action throw (or answer a bare string)."""
    viewer = package_of(project) / "static" / "viewer.js"
    text = viewer.read_text(encoding="utf-8")
    broken = ('if (actionId === "show-file") throw new Error("planted breakage");'
              if how == "throw" else 'if (actionId === "show-file") return "not a result";')
    text, count = re.subn(r"(runAction\s*\([^)]*\)\s*\{)", r"\1 " + broken.replace("\\", "\\\\"), text, count=1)
    assert count == 1, "the template's viewer has no runAction(…) { to break"
    viewer.write_text(text, encoding="utf-8")
