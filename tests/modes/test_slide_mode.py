"""The slide mode: manifest, seeded deck and skill, as a person would meet them."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace
from pneuma.workspace.skill import install_skill

ACTIONS = {"navigate-to", "ui:toggle-outline", "checkContentFit", "describe-view", "capture-screenshot"}
SLIDE_NAME = re.compile(r"^slides/\d{2}[a-z]?-[a-z0-9]+(?:-[a-z0-9]+)*\.html$")
CUSTOM_PROPERTY = re.compile(r"(--[A-Za-z0-9-]+)\s*:")
VAR_USE = re.compile(r"var\(\s*(--[A-Za-z0-9-]+)")
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)")


class _Fragment(HTMLParser):
    """Collects what the tests need from one slide fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.roots: list[tuple[str, list[str]]] = []
        self.classes: set[str] = set()
        self.urls: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self.depth = 0
        self.has_doctype = False
        self._in_style = False

    def handle_decl(self, decl: str) -> None:
        self.has_doctype = True

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        classes = (attrs.get("class") or "").split()
        self.classes.update(classes)
        if self.depth == 0:
            self.roots.append((tag, classes))
        for name in ("src", "href"):
            if attrs.get(name):
                self.urls.append(attrs[name])
        if attrs.get("style"):
            self.styles.append(attrs["style"])
        if tag == "style":
            self._in_style = True
        if tag not in {"img", "br", "hr", "meta", "link", "input", "source"}:
            self.depth += 1

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in {"img", "br", "hr", "meta", "link", "input", "source"}:
            self.depth -= 1

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False
        self.depth -= 1

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)
        else:
            self.text.append(data)


def _parse(path: Path) -> _Fragment:
    parser = _Fragment()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def _words(text: str) -> str:
    return " ".join(text.split())


def _seeded(tmp_path: Path) -> tuple[Path, dict]:
    mode = get_mode("slide")
    init_workspace(mode, tmp_path)
    return tmp_path, json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))


# --- the manifest ---


def test_mode_declares_a_manifest_workspace_and_the_five_actions():
    manifest = get_mode("slide").manifest
    workspace = manifest.viewer_api.workspace
    assert workspace is not None
    assert workspace.type == "manifest"
    assert workspace.manifest_file == "manifest.json"
    assert workspace.ordered and workspace.multi_file and workspace.has_active_file

    actions = {a.id: a for a in manifest.viewer_api.actions}
    assert set(actions) == ACTIONS
    assert all(a.agent_invocable for a in actions.values())
    assert actions["navigate-to"].params["file"].required
    assert actions["navigate-to"].params["file"].type == "string"
    assert actions["checkContentFit"].params["slides"].type == "array"
    assert not actions["checkContentFit"].params["slides"].required

    assert manifest.viewer_api.scaffold is not None
    assert "manifest.json" in manifest.viewer_api.scaffold.clear_patterns

    params = {p.name: p.default_value for p in manifest.init.params}
    assert params == {"slideWidth": 1280, "slideHeight": 720}
    assert manifest.init.content_check_pattern == "manifest.json"


def test_build_deck_workflow_uses_declared_actions_and_waits_for_the_outline():
    manifest = get_mode("slide").manifest
    workflow = {w.id: w for w in manifest.workflows}["build-deck"]
    assert workflow.steps[0].requires_confirmation
    used = [s.action for s in workflow.steps if s.action]
    assert "checkContentFit" in used and "navigate-to" in used
    assert set(used) <= ACTIONS
    for step in workflow.steps:
        if step.action == "navigate-to":
            assert step.params["file"] == "slides/01-title.html"


# --- the seeded deck ---


def test_seeded_manifest_lists_existing_named_fragment_slides(tmp_path):
    workspace, deck = _seeded(tmp_path)
    assert isinstance(deck["title"], str) and deck["title"].strip()
    slides = deck["slides"]
    assert len(slides) >= 6
    files = [s["file"] for s in slides]
    assert len(set(files)) == len(files)
    assert files[0] == "slides/01-title.html"
    assert sorted(p.relative_to(workspace).as_posix() for p in (workspace / "slides").glob("*.html")) == sorted(files)

    for entry in slides:
        assert set(entry) == {"file", "title"}
        assert SLIDE_NAME.match(entry["file"]), entry["file"]
        assert isinstance(entry["title"], str) and entry["title"].strip()
        path = workspace / entry["file"]
        assert path.is_file(), entry["file"]
        raw = path.read_text(encoding="utf-8")
        fragment = _parse(path)
        assert not fragment.has_doctype, entry["file"]
        assert not {"html", "head", "body", "script", "link"} & set(fragment.tags), entry["file"]
        # One root element: <section class="slide ...">.
        assert len(fragment.roots) == 1, entry["file"]
        tag, classes = fragment.roots[0]
        assert tag == "section" and "slide" in classes, entry["file"]
        assert fragment.depth == 0, f"unbalanced tags in {entry['file']}"
        # The thumbnail title is the slide's visible headline.
        assert _words(entry["title"]) in _words("".join(fragment.text)), entry["file"]
        assert "{{" not in raw


def test_seeded_slides_use_only_classes_and_tokens_the_theme_defines(tmp_path):
    workspace, deck = _seeded(tmp_path)
    theme = (workspace / "theme.css").read_text(encoding="utf-8")
    defined_props = set(CUSTOM_PROPERTY.findall(theme))
    defined_classes = set(re.findall(r"\.([A-Za-z_][\w-]*)", re.sub(r"url\([^)]*\)", "", theme)))
    for used in VAR_USE.findall(theme):
        assert used in defined_props, f"theme.css uses undefined {used}"
    for entry in deck["slides"]:
        fragment = _parse(workspace / entry["file"])
        missing = fragment.classes - defined_classes
        assert not missing, f"{entry['file']} uses classes theme.css lacks: {sorted(missing)}"
        for style in fragment.styles:
            for used in VAR_USE.findall(style):
                assert used in defined_props, f"{entry['file']} uses undefined {used}"


def test_theme_defines_the_canvas_and_design_tokens(tmp_path):
    workspace, _ = _seeded(tmp_path)
    theme = (workspace / "theme.css").read_text(encoding="utf-8")
    root = re.search(r":root\s*\{(.*?)\}", theme, re.S)
    assert root, "theme.css has no :root block"
    tokens = dict(re.findall(r"(--[A-Za-z0-9-]+)\s*:\s*([^;]+);", root.group(1)))
    assert tokens["--slide-width"].strip() == "1280px"
    assert tokens["--slide-height"].strip() == "720px"
    for name in ("--color-bg", "--color-text", "--color-accent", "--font-sans", "--text-h1", "--text-body", "--text-small"):
        assert name in tokens, name
    assert len(tokens) >= 30
    assert ".slide " in theme or ".slide{" in theme or ".slide {" in theme


def test_every_referenced_asset_exists_and_every_asset_is_used(tmp_path):
    workspace, deck = _seeded(tmp_path)
    references: set[str] = set()
    for entry in deck["slides"]:
        fragment = _parse(workspace / entry["file"])
        urls = list(fragment.urls)
        for style in fragment.styles:
            urls += CSS_URL.findall(style)
        for url in urls:
            if url.startswith(("#", "data:")):
                continue
            assert not url.startswith(("/", "../", "http:", "https:", "file:")), (entry["file"], url)
            assert (workspace / url).is_file(), f"{entry['file']} refers to missing {url}"
            references.add(url)
    for url in CSS_URL.findall((workspace / "theme.css").read_text(encoding="utf-8")):
        if not url.startswith(("#", "data:")):
            assert (workspace / url).is_file(), url
    assets = {p.relative_to(workspace).as_posix() for p in (workspace / "assets").rglob("*") if p.is_file()}
    assert any(a.endswith(".svg") for a in assets)
    assert assets == references, "seed assets no slide uses, or references outside assets/"


def test_seeded_svg_assets_are_well_formed_svg(tmp_path):
    workspace, _ = _seeded(tmp_path)
    svgs = sorted((workspace / "assets").glob("*.svg"))
    assert svgs
    for svg in svgs:
        root = ET.parse(svg).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", svg.name
        assert len(root.get("viewBox", "").split()) == 4, svg.name


def test_existing_deck_is_not_seeded_over(tmp_path):
    (tmp_path / "manifest.json").write_text('{"title": "Mine", "slides": []}', encoding="utf-8")
    result = init_workspace(get_mode("slide"), tmp_path)
    assert result.seeded == []
    assert json.loads((tmp_path / "manifest.json").read_text())["title"] == "Mine"
    assert not (tmp_path / "slides").exists()


# --- the skill ---


def test_skill_installs_with_the_slide_size_filled_in(tmp_path):
    mode = get_mode("slide")
    result = install_skill(mode, tmp_path, {"slideWidth": 1920, "slideHeight": 1080})
    assert result.changed
    skill_dir = tmp_path / ".claude" / "skills" / "pneuma-slide"
    skill = (skill_dir / "SKILL.md").read_text(encoding="utf-8")
    assert skill.startswith("---\nname: pneuma-slide\ndescription: ")
    assert "1920×1080" in skill
    assert "1920px" in skill and "1080px" in skill
    assert (skill_dir / "references" / "layouts.md").is_file()
    assert (skill_dir / "references" / "theme-tokens.md").is_file()
    for path in skill_dir.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert "{{slideWidth}}" not in text and "{{slideHeight}}" not in text, path.name


def test_skill_teaches_formats_actions_and_viewer_context():
    skill = (get_mode("slide").skill_dir / "SKILL.md").read_text(encoding="utf-8")
    for action in ACTIONS:
        assert f"`{action}`" in skill, action
    assert '"actionId"' in skill and '"action":' not in skill
    assert "$PNEUMA_API/api/viewer/action" in skill and "$PNEUMA_TOKEN" in skill
    assert '<viewer-context mode="slide"' in skill
    for term in ("manifest.json", "theme.css", "slides/NN-slug.html", "assets/", "<section class=\"slide\">"):
        assert term in skill, term


def test_claude_md_lists_the_actions_and_a_second_install_changes_nothing(tmp_path):
    mode = get_mode("slide")
    init = init_workspace(mode, tmp_path)
    assert init.params == {"slideWidth": 1280, "slideHeight": 720}
    install_skill(mode, tmp_path, init.params)
    claude = (tmp_path / "CLAUDE.md").read_text(encoding="utf-8")
    for action in ACTIONS:
        assert f"`{action}`" in claude, action
    assert "pneuma-slide/SKILL.md" in claude
    assert (tmp_path / ".claude" / "commands" / "build-deck.md").is_file()
    assert "1280×720" in (tmp_path / ".claude/skills/pneuma-slide/SKILL.md").read_text(encoding="utf-8")

    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    again = install_skill(mode, tmp_path, init.params)
    assert again.changes == []
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before
