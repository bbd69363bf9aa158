"""The host's own CLAUDE.md sections: the skill (``pneuma:start``) and the
viewer's self-description (``pneuma:viewer-api:start``).

They are rendered from the Jinja templates in ``templates/claude_md/`` and
offered through the same ``claude_md_sections`` hook a plugin would use.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pneuma import hookimpl
from pneuma.host.manifest import ViewerAction, WorkflowSpec, localize
from pneuma.host.modes import ClaudeMdSection, LoadedMode
from pneuma.host.paths import templates_dir

if TYPE_CHECKING:
    import jinja2

SKILL_SECTION_KEY = ""
VIEWER_API_SECTION_KEY = "viewer-api"


@lru_cache(maxsize=1)
def template_environment() -> jinja2.Environment:
    # Imported on first use: this module is a plugin, loaded by every
    # `pneuma` command, and most runs render nothing (the install is
    # usually up to date).
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_template(name: str, **context: Any) -> str:
    return template_environment().get_template(name).render(**context)


def workflow_context(workflow: WorkflowSpec) -> dict[str, Any]:
    steps = []
    for step in workflow.steps:
        if step.tool is not None:
            kind = f"tool `{step.tool}`"
        elif step.action is not None:
            kind = f"viewer action `{step.action}`"
        else:
            kind = "your own work"
        steps.append(
            {
                "label": localize(step.label),
                "kind": kind,
                "tool": step.tool,
                "action": step.action,
                "prompt": step.prompt,
                "params": step.params,
                "params_json": json.dumps(step.params, ensure_ascii=False, sort_keys=True),
                "description": step.description,
                "requires_confirmation": step.requires_confirmation,
            }
        )
    return {
        "id": workflow.id,
        "label": localize(workflow.label),
        "description": workflow.description,
        "steps": steps,
    }


def _params_text(action: ViewerAction) -> str:
    if not action.params:
        return "—"
    parts = []
    for name, param in action.params.items():
        text = f"{name}: {param.type}"
        if param.required:
            text += " (required)"
        if param.description:
            text += f" — {param.description}"
        parts.append(text.replace("|", "\\|"))
    return "; ".join(parts)


def _example(action: ViewerAction) -> str | None:
    """A ready-to-run payload for actions with required params."""
    required = {n: p for n, p in action.params.items() if p.required}
    if not required:
        return None
    samples = {"string": "…", "number": 1, "boolean": True, "array": [], "object": {}}
    params = {name: samples[param.type] for name, param in required.items()}
    return json.dumps({"actionId": action.id, "params": params}, ensure_ascii=False)


def _workspace_traits(mode: LoadedMode) -> str:
    workspace = mode.manifest.viewer_api.workspace
    assert workspace is not None
    traits = [
        "multi-file" if workspace.multi_file else "single file",
        "ordered" if workspace.ordered else "unordered",
    ]
    if workspace.has_active_file:
        traits.append("active file tracking")
    if workspace.supports_content_sets:
        traits.append("content sets")
    return ", ".join(traits)


def skill_section(mode: LoadedMode) -> ClaudeMdSection:
    manifest = mode.manifest
    skill_files = sorted(
        p.relative_to(mode.skill_dir).as_posix()
        for p in mode.skill_dir.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    body = render_template(
        "claude_md/skill_section.md.j2",
        mode=manifest.name,
        display_name=localize(manifest.display_name),
        description=localize(manifest.description).rstrip(".") + "." if manifest.description else "",
        md_scene=manifest.skill.md_scene.strip(),
        install_name=manifest.skill.install_name,
        skill_files=skill_files,
        workflows=[workflow_context(w) for w in manifest.workflows],
        tools=[{"name": t.name, "description": t.description.split("\n")[0]} for t in manifest.tools],
        tools_server=f"pneuma-{manifest.name}",
    )
    return ClaudeMdSection(SKILL_SECTION_KEY, body)


def viewer_api_section(mode: LoadedMode) -> ClaudeMdSection:
    manifest = mode.manifest
    api = manifest.viewer_api
    actions = [
        {
            "id": a.id,
            "label": localize(a.label),
            "description": (a.description or "").replace("|", "\\|"),
            "params_text": _params_text(a),
            "example": _example(a),
        }
        for a in api.actions
        if a.agent_invocable
    ]
    scaffold = None
    if api.scaffold is not None:
        scaffold = {
            "description": api.scaffold.description.rstrip(".") + ".",
            "clear_patterns": api.scaffold.clear_patterns,
        }
    body = render_template(
        "claude_md/viewer_api_section.md.j2",
        workspace=api.workspace,
        workspace_traits=_workspace_traits(mode) if api.workspace else "",
        watch_patterns=manifest.viewer.watch_patterns,
        actions=actions,
        scaffold=scaffold,
    )
    return ClaudeMdSection(VIEWER_API_SECTION_KEY, body)


@hookimpl
def claude_md_sections(mode: LoadedMode, workspace: Path) -> list[ClaudeMdSection]:
    return [skill_section(mode), viewer_api_section(mode)]
