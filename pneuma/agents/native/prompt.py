"""The system prompt: the workspace's CLAUDE.md Pneuma sections, the skill,
and what is different about running inside Pneuma's own runtime."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pneuma.api import MarkerError, find_sections

log = logging.getLogger(__name__)

SKILL_LIMIT = 60_000  # characters of SKILL.md kept in the prompt

RUNTIME_GUIDE = """\
## How you work here

You run inside Pneuma's own agent runtime, not in a terminal: you have no
shell and no `curl`. Act only through the tools you are given.

- Where the skill or the sections above tell you to call a viewer action
  with `curl … /api/viewer/action`, call the tool `viewer__<actionId>`
  instead, with the same params. Its answer is the viewer's
  `{"success", "message", "data"}`.
- Workspace files: use the mode's tools when it has any, otherwise
  `workspace_list_files`, `workspace_read_file` and `workspace_write_file`.
  Every file you write is shown to the person live.
- Browser tools (`browser_*`) act in a real browser the person connected to
  Pneuma, in a tab of its own. The person picks the browser and confirms
  before the first browser action of a task. After `browser_open`, and after
  a click or a submit, you get the page prepared for you: its title, URL,
  readable text and a screenshot. Read that before deciding the next step;
  use `browser_xpath_scan` to find the XPath of what to click or type into.
- Keep the person informed in a sentence or two as you go; end with what
  you did and what they might want next.
"""


def pneuma_sections(workspace: Path) -> list[str]:
    """The bodies of CLAUDE.md's Pneuma sections, in file order."""
    path = workspace / "CLAUDE.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    try:
        spans = find_sections(text)
    except MarkerError as exc:
        log.warning("CLAUDE.md: %s", exc)
        return []
    ordered = sorted(spans.values(), key=lambda s: s.start)
    return [text[s.body_start:s.body_end].strip("\n") for s in ordered
            if text[s.body_start:s.body_end].strip()]


def skill_text(mode: Any, workspace: Path) -> str | None:
    """The installed SKILL.md (params filled in), else the mode's own copy."""
    skill = mode.manifest.skill
    installed = workspace / ".claude" / "skills" / skill.install_name / "SKILL.md"
    candidates = [installed]
    package_dir = getattr(mode, "package_dir", None)
    if package_dir is not None:
        candidates.append(Path(package_dir) / skill.source_dir / "SKILL.md")
    for path in candidates:
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            continue
    return None


def build_system_prompt(mode: Any, workspace: Path) -> str:
    parts: list[str] = []
    sections = pneuma_sections(workspace)
    if sections:
        parts.extend(sections)
    else:
        description = getattr(mode.manifest, "description", "") or ""
        parts.append(f"You are the agent inside Pneuma, a co-creation environment, working in "
                     f"the {mode.name} mode: {description}".strip())
    skill = skill_text(mode, workspace)
    if skill:
        if len(skill) > SKILL_LIMIT:
            skill = skill[:SKILL_LIMIT] + "\n\n[… the rest of SKILL.md was cut here]"
        parts.append(f"<skill name=\"{mode.manifest.skill.install_name}\">\n{skill.strip()}\n</skill>")
    parts.append(RUNTIME_GUIDE)
    parts.append(f"The workspace is {workspace}; every path you use is relative to it.")
    return "\n\n".join(parts)
