"""The doc mode: manifest, seed documents and skill installation.

What every seeded mode's setup promises (no seeds over the person's own
work, a second skill install changes nothing) is in test_mode_setup.py.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote

import pytest

from pneuma.host.registry import get_mode
from pneuma.workspace.params import has_content, init_workspace
from pneuma.workspace.skill import install_skill

SEED_DOCS = ["README.md", "guide/markdown.md", "notes/ideas.md"]
SEED_IMAGE = "images/how-it-works.svg"


@pytest.fixture(scope="module")
def mode():
    return get_mode("doc")


# --- a tiny GitHub-flavoured Markdown reader, enough to check the seeds ---

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def prose_lines(text: str, *, keep_code_spans: bool = False) -> list[str]:
    """The lines outside fenced code blocks, inline code removed unless kept."""
    lines, fence = [], None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            continue
        if fence is not None:
            if set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
                fence = None
            continue
        lines.append(line if keep_code_spans else re.sub(r"(`+)(.+?)\1", "", line))
    assert fence is None, "unclosed code fence"
    return lines


def github_slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links → their text
    text = text.replace("`", "").replace("*", "")
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def heading_slugs(text: str) -> set[str]:
    slugs: set[str] = set()
    counts: dict[str, int] = {}
    for line in prose_lines(text, keep_code_spans=True):
        match = _HEADING.match(line)
        if not match:
            continue
        base = github_slug(match.group(2))
        n = counts.get(base, 0)
        slugs.add(base if n == 0 else f"{base}-{n}")
        counts[base] = n + 1
    return slugs


def relative_links(text: str) -> list[tuple[bool, str]]:
    """(is_image, target) for every link and image that is not an external URL."""
    found = []
    for line in prose_lines(text):
        for match in _LINK.finditer(line):
            target = match.group(3)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue
            found.append((match.group(1) == "!", target))
    return found


def test_slug_helper_follows_github_rules():
    # The helper itself must be right, or the link test below proves nothing.
    assert github_slug("What's new in 2.0?") == "whats-new-in-20"
    assert github_slug("Step 3: Deploy") == "step-3-deploy"
    assert github_slug("The `--force` flag") == "the---force-flag"
    assert heading_slugs("## Examples\n\n## Examples\n") == {"examples", "examples-1"}
    assert heading_slugs("```markdown\n# Not a heading\n```\n# Real\n") == {"real"}


# --- the manifest ---


def test_mode_is_an_all_files_markdown_workspace(mode):
    manifest = mode.manifest
    assert manifest.name == "doc"
    assert manifest.display_name == {"en": "Documents", "zh-CN": "文档"}
    assert manifest.icon and manifest.icon.startswith("<svg")
    ET.fromstring(manifest.icon.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))
    workspace = manifest.viewer_api.workspace
    assert workspace is not None
    assert (workspace.type, workspace.multi_file, workspace.ordered, workspace.has_active_file) == (
        "all",
        True,
        False,
        True,
    )
    assert "**/*.md" in manifest.viewer.watch_patterns
    assert any("svg" in p and "png" in p for p in manifest.viewer.watch_patterns)
    for ignored in ("node_modules/**", ".pneuma/**", ".claude/**"):
        assert ignored in manifest.viewer.ignore_patterns
    assert manifest.viewer.module == "viewer.js"
    assert (mode.static_dir / "viewer.js").is_file()
    assert manifest.skill.install_name == "pneuma-doc"
    assert manifest.agent.greeting
    assert manifest.init.content_check_pattern == "**/*.md"
    assert manifest.init.seed_files == {"seeds/": "."}


def test_navigate_to_takes_a_file_and_an_optional_heading(mode):
    navigate = mode.manifest.action("navigate-to")
    assert navigate is not None and navigate.agent_invocable
    assert navigate.category == "navigate"
    assert set(navigate.params) == {"file", "heading"}
    assert navigate.params["file"].required and navigate.params["file"].type == "string"
    assert not navigate.params["heading"].required
    assert navigate.params["heading"].type == "string"

    describe = mode.manifest.action("describe-view")
    assert describe is not None and describe.agent_invocable and not describe.params
    assert mode.manifest.action("ui:toggle-toc") is not None


def test_commands_and_workflows(mode):
    manifest = mode.manifest
    command_ids = {c.id for c in manifest.viewer_api.commands}
    assert {"tighten-prose", "add-toc"} <= command_ids
    workflows = {w.id: w for w in manifest.workflows}
    assert "write-doc" in workflows
    steps = workflows["write-doc"].steps
    outline = next(s for s in steps if s.id == "outline")
    assert outline.requires_confirmation
    # The document is shown to the person, after the outline is agreed.
    actions = [s.action for s in steps]
    assert "navigate-to" in actions
    assert actions.index("navigate-to") > [s.id for s in steps].index("outline")
    known = {a.id for a in manifest.viewer_api.actions}
    for workflow in manifest.workflows:
        for step in workflow.steps:
            assert step.action is None or step.action in known


# --- seeding ---


def test_empty_workspace_is_seeded_with_documents_and_image(mode, tmp_path: Path):
    workspace = tmp_path / "ws"
    result = init_workspace(mode, workspace)
    assert sorted(result.seeded) == sorted(SEED_DOCS + [SEED_IMAGE])
    assert has_content(mode, workspace)
    for rel in SEED_DOCS:
        text = (workspace / rel).read_text("utf-8")
        assert text.startswith("# "), f"{rel} must open with its title"
        assert len(text) > 800, f"{rel} is too thin to be worth starting from"
        for marker in ("TODO", "lorem", "TBD", "FIXME"):
            assert marker.lower() not in text.lower(), f"{rel} contains {marker}"
    svg = ET.parse(workspace / SEED_IMAGE).getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg" and svg.get("viewBox")


def test_readme_demonstrates_what_the_viewer_renders(seeded: Path):
    readme = (seeded / "README.md").read_text("utf-8")
    lines = readme.splitlines()
    assert any(re.match(r"^## ", line) for line in lines)
    assert any(re.match(r"^\|\s*-{3,}", line) for line in lines), "no table"
    assert any(re.match(r"^- \[ \] ", line) for line in lines), "no open task"
    assert any(re.match(r"^- \[x\] ", line) for line in lines), "no done task"
    assert re.search(r"^```[a-z]+$", readme, re.M), "no fenced code block with a language"
    assert (True, SEED_IMAGE) in relative_links(readme)


def test_every_code_fence_names_a_language(seeded: Path):
    for rel in SEED_DOCS:
        fence = None
        for number, line in enumerate((seeded / rel).read_text("utf-8").splitlines(), 1):
            match = _FENCE.match(line)
            if not match:
                continue
            if fence is None:
                fence = match.group(1)
                info = line.strip()[len(fence) :].strip()
                assert info, f"{rel}:{number} opens a code block without a language"
            elif set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
                fence = None
        assert fence is None, f"{rel} has an unclosed code block"


def test_every_relative_link_and_image_in_the_seeds_resolves(seeded: Path):
    checked = 0
    for rel in SEED_DOCS:
        source = seeded / rel
        for is_image, target in relative_links(source.read_text("utf-8")):
            path_part, _, fragment = target.partition("#")
            resolved = (source.parent / unquote(path_part)).resolve() if path_part else source
            assert resolved.is_file(), f"{rel}: {target} does not resolve"
            assert seeded.resolve() in resolved.parents, f"{rel}: {target} leaves the workspace"
            if is_image:
                assert resolved.suffix in {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}
            if fragment:
                slugs = heading_slugs(resolved.read_text("utf-8"))
                assert fragment in slugs, f"{rel}: #{fragment} is not a heading of {resolved.name}"
            checked += 1
    # The seeds link to each other, into sections and to the image.
    assert checked >= 15


def test_broken_links_are_detected(tmp_path: Path):
    # The resolution check above must be able to fail.
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n[gone](missing.md) and [bad anchor](#nowhere)\n", "utf-8")
    links = relative_links(page.read_text("utf-8"))
    assert links == [(False, "missing.md"), (False, "#nowhere")]
    assert not (tmp_path / "missing.md").exists()
    assert "nowhere" not in heading_slugs(page.read_text("utf-8"))


def test_workspace_with_only_other_files_is_seeded(mode, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("not markdown\n", "utf-8")
    result = init_workspace(mode, workspace)
    assert "README.md" in result.seeded
    assert (workspace / "notes.txt").read_text("utf-8") == "not markdown\n"


# --- the skill ---


def test_skill_installs_and_claude_md_lists_the_actions(mode, seeded: Path):
    result = install_skill(mode, seeded, {})
    assert result.changed
    skill = (seeded / ".claude/skills/pneuma-doc/SKILL.md").read_text("utf-8")
    assert skill.startswith("---\nname: pneuma-doc\ndescription: ")
    assert '"actionId":"navigate-to"' in skill
    assert '"action":' not in skill
    assert "<viewer-context mode=\"doc\"" in skill
    assert "{{" not in skill

    claude = (seeded / "CLAUDE.md").read_text("utf-8")
    assert ".claude/skills/pneuma-doc/SKILL.md" in claude
    assert "Type: all" in claude
    navigate_row = next(line for line in claude.splitlines() if line.startswith("| `navigate-to`"))
    assert "file: string (required)" in navigate_row
    assert "heading: string" in navigate_row
    assert "| `describe-view` |" in claude
    assert "/write-doc" in claude
    assert (seeded / ".claude/commands/write-doc.md").is_file()
    # Installing never touches the person's documents.
    assert (seeded / "README.md").read_bytes() == (mode.package_dir / "seeds/README.md").read_bytes()
