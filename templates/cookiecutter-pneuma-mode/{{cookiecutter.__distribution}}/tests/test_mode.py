"""Tests of the {{ cookiecutter.name }} mode. Run them with `python -m pytest` after
`pip install -e '.[test]'` (the mode must be installed for Pneuma to find it).

They use the real parts of Pneuma through `pneuma.testing`: the mode as
`pneuma run` loads it, workspaces seeded as `pneuma init` seeds them, the
`ToolContext` a handler really gets, the tool runtime with its schema checks,
the exporter as `pneuma export` runs it, and a real server on 127.0.0.1 with
a fake agent.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pneuma.api import ExportError, LoadedMode, ToolError, TurnFilesFromMaps
from pneuma.testing import (
    call_tool,
    install_skill,
    load_mode,
    make_workspace,
    serve,
    shell_page,
    tool_context,
)

import {{ cookiecutter.__package }} as package
from {{ cookiecutter.__package }} import changes, export, tools

MODE = "{{ cookiecutter.name }}"
PACKAGE_DIR = Path(tools.__file__).resolve().parent


@pytest.fixture(scope="module")
def mode() -> LoadedMode:
    return load_mode(MODE)


@pytest.fixture
def workspace(pneuma_workspace) -> Path:
    return pneuma_workspace(MODE)


# --- the manifest -----------------------------------------------------------------


def test_pneuma_finds_the_mode_in_this_package(mode: LoadedMode):
    assert mode.package_dir == PACKAGE_DIR
    assert mode.distribution == "{{ cookiecutter.__distribution }}"
    manifest = mode.manifest
    assert manifest.viewer_api.workspace.type == "all"
    assert manifest.viewer.module == "viewer.js"
    assert (mode.static_dir / "viewer.js").is_file()
    assert [a.id for a in manifest.agent_actions] == ["show-file"]
    assert manifest.action("show-file").params["file"].required
    assert [t.name for t in manifest.tools] == ["outline"]
    assert [w.id for w in manifest.workflows] == ["review-page"]
    steps = manifest.workflows[0].steps
    assert [s.tool or s.action or "prompt" for s in steps] == ["outline", "prompt", "prompt", "show-file"]


def test_every_tool_handler_imports(mode: LoadedMode):
    for spec in mode.manifest.tools:
        module, function = spec.handler.split(":")
        assert callable(getattr(importlib.import_module(module), function)), spec.handler


# --- seeds and skill ---------------------------------------------------------------


def test_seeds_fill_an_empty_workspace(mode: LoadedMode, tmp_path: Path):
    ws = make_workspace(mode, tmp_path / "ws")
    assert sorted(p.name for p in ws.iterdir() if not p.name.startswith(".")) == ["welcome.md"]
    text = (ws / "welcome.md").read_text(encoding="utf-8")
    assert text.startswith("# Welcome to ")
    # A workspace with pages of its own is left alone.
    other = tmp_path / "other"
    other.mkdir()
    (other / "plan.md").write_text("# Plan\n", encoding="utf-8")
    make_workspace(mode, other)
    assert sorted(p.name for p in other.iterdir() if not p.name.startswith(".")) == ["plan.md"]


def test_skill_installs_and_claude_md_lists_the_action(mode: LoadedMode, workspace: Path):
    result = install_skill(mode, workspace)
    assert result.changed
    skill = workspace / ".claude" / "skills" / mode.manifest.skill.install_name / "SKILL.md"
    text = skill.read_text(encoding="utf-8")
    assert text.startswith(f"---\nname: {mode.manifest.skill.install_name}\ndescription: ")
    assert '"actionId":"show-file"' in text
    claude = (workspace / "CLAUDE.md").read_text(encoding="utf-8")
    assert "| `show-file` |" in claude
    assert "`outline`" in claude
    assert "/review-page" in claude
    # A second install changes nothing.
    assert not install_skill(mode, workspace).changed


# --- the outline tool -----------------------------------------------------------------


def test_outline_of_the_seed_page(mode: LoadedMode, workspace: Path):
    result = tools.outline(tool_context(mode, workspace), {"file": "welcome.md"})
    Draft202012Validator(mode.manifest.tool("outline").output_schema).validate(result)
    assert result["file"] == "welcome.md"
    assert result["title"].startswith("Welcome to ")
    assert result["headings"][0] == {"level": 1, "text": result["title"], "line": 1}
    assert [h["text"] for h in result["headings"] if h["level"] == 2] == [
        "How to steer", "What the pages can hold", "For the mode's author",
    ]
    assert result["words"] > 100
    assert result["lines"] == len((workspace / "welcome.md").read_text().splitlines())


def test_outline_ignores_headings_in_code_and_strips_markup(mode: LoadedMode, workspace: Path):
    (workspace / "notes.md").write_text(
        "# The **plan**\n\n```bash\n# not a heading\n```\n\n## See [the docs](https://example.com)\n",
        encoding="utf-8",
    )
    result = tools.outline(tool_context(mode, workspace), {"file": "notes.md"})
    assert result["headings"] == [
        {"level": 1, "text": "The plan", "line": 1},
        {"level": 2, "text": "See the docs", "line": 7},
    ]


@pytest.mark.parametrize(
    ("path", "code"),
    [("missing.md", "E_NOT_FOUND"), ("notes.txt", "E_BAD_ARGS"), ("../outside.md", "E_DENY_PATH"),
     (".pneuma/history.md", "E_DENY_PATH")],
)
def test_outline_errors(mode: LoadedMode, workspace: Path, path: str, code: str):
    (workspace / "notes.txt").write_text("plain text\n", encoding="utf-8")
    with pytest.raises(ToolError) as caught:
        tools.outline(tool_context(mode, workspace), {"file": path})
    assert caught.value.code == code


def test_outline_through_pneumas_tool_runtime(mode: LoadedMode, workspace: Path):
    # The same call the agent makes over MCP or `pneuma tool`: arguments and
    # result are checked against the manifest's schemas.
    result = call_tool(mode, workspace, "outline", {"file": "welcome.md"})
    assert result["title"].startswith("Welcome to "), result
    bad = call_tool(mode, workspace, "outline", {"file": "welcome.md", "depth": 2})
    assert bad["error"]["code"] == "E_BAD_ARGS"
    missing = call_tool(mode, workspace, "outline", {"file": "missing.md"})
    assert missing["error"]["code"] == "E_NOT_FOUND"


# --- the HTML export -------------------------------------------------------------------


class ExportedPage(HTMLParser):
    """What a reader of the exported file finds: the pages (their files and
    headings), every id, every link, and the text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.files: list[str] = []
        self.headings: list[tuple[str, str]] = []
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []
        self._heading: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append(tag)
        if found.get("id"):
            self.ids.add(found["id"] or "")
        if tag == "article":
            self.files.append(found.get("data-file") or "")
        if tag == "a" and found.get("href"):
            self.links.append(found["href"] or "")
        if tag in ("h1", "h2"):
            self._heading = tag
            self.headings.append((tag, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == self._heading:
            self._heading = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._heading:
            tag, text = self.headings[-1]
            self.headings[-1] = (tag, text + data)


def test_html_export_holds_every_page_in_one_file(workspace: Path, tmp_path: Path):
    (workspace / "notes").mkdir()
    (workspace / "notes" / "plan.md").write_text(
        "# Launch plan\n\nShip it **soon**, not <script>alert(1)</script>.\n\n"
        "## Budget\n\n1. Design\n2. Build\n", encoding="utf-8")
    out = tmp_path / "notes.html"
    # What `pneuma export --mode {{ cookiecutter.name }} --format html -o notes.html` runs.
    result = export.EXPORTER.run(workspace, "html", out)
    assert result.files == [out] and result.summary == "2 page(s)"
    page = ExportedPage(out.read_text(encoding="utf-8"))
    # Every page, in path order; Pneuma's own files are not pages.
    assert page.files == ["notes/plan.md", "welcome.md"]
    h1 = [text for tag, text in page.headings if tag == "h1"]
    assert h1 == ["Launch plan", "Welcome to {{ cookiecutter.__display_name }}"]
    assert ("h2", "Budget") in page.headings and ("h2", "How to steer") in page.headings
    # The contents lead to the pages and their sections.
    inside = [link[1:] for link in page.links if link.startswith("#")]
    assert len(inside) >= 6 and set(inside) <= page.ids
    # Markdown is rendered, markup in the text is only text.
    assert {"strong", "ol", "pre", "blockquote", "code"} <= set(page.tags)
    assert "script" not in page.tags
    assert "not <script>alert(1)</script>." in "".join(page.text)
    # Without an output, it goes where Pneuma puts exports.
    default = export.EXPORTER.run(workspace, "html").files[0]
    assert default == workspace.resolve() / "exports" / f"{workspace.name}.html"


def test_html_export_of_a_workspace_without_pages_says_so(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "CLAUDE.md").write_text("# For the agent, not a page\n", encoding="utf-8")
    (empty / "AGENTS.md").write_text("# For Codex, not a page\n", encoding="utf-8")
    with pytest.raises(ExportError, match="has no Markdown pages to export") as caught:
        export.EXPORTER.run(empty, "html")
    assert caught.value.code == "E_CONFLICT"


# --- what a turn changed ---------------------------------------------------------------


def test_a_turn_is_described_in_pages_and_sections(workspace: Path):
    # What the chat shows under a turn and `pneuma checkpoints show` prints:
    # the describer gets the turn's two states (here two maps) and names the
    # page by its title and the sections that changed.
    describers = {d.mode: d for d in package.register_change_describers()}
    assert describers[MODE] is changes.DESCRIBER
    page = (workspace / "welcome.md").read_text(encoding="utf-8")
    title = page.splitlines()[0].lstrip("# ")
    edited = page.replace("## How to steer", "## How to steer\n\nStart small.", 1)
    files = TurnFilesFromMaps({"welcome.md": page.encode(), "old.md": b"# Old\n"},
                              {"welcome.md": edited.encode(), "plan.md": b"# Plan\n\n```\n# no\n```\n"})
    described = [(c.id, c.where, c.what, c.kind, c.locate) for c in changes.DESCRIBER.describe(files)]
    assert described == [
        ("page:old.md", "Old", "page removed", "removed", None),
        ("page:plan.md", "Plan", "page added", "added", {"file": "plan.md"}),
        ("page:welcome.md", title, "sections changed: How to steer", "changed",
         {"file": "welcome.md", "heading": "How to steer"}),
    ]


# --- a running Pneuma ------------------------------------------------------------------


def test_a_running_pneuma_serves_the_viewer_the_tool_and_the_chat(mode: LoadedMode, workspace: Path):
    async def scenario() -> None:
        async with serve(mode, workspace) as server:
            config = await (await server.get("/api/config")).json()
            viewer = await server.get(config["modeStaticUrl"] + mode.manifest.viewer.module)
            assert viewer.status == 200
            assert "export function extractContext" in await viewer.text()
            # The agent's curl reaches the same handler as MCP does.
            answer = await server.post("/api/tools/outline", json={"file": "welcome.md"})
            assert (await answer.json())["title"].startswith("Welcome to ")
            # The Export menu lists the exporter's format and downloads it.
            menu = await (await server.get("/api/export")).json()
            assert [f["name"] for f in menu["formats"]] == ["html"]
            download = await server.get("/api/export/html")
            assert download.status == 200
            assert "<h1 id=" in await download.text()
            assert (workspace / download.headers["X-Pneuma-Export-Path"]).is_file()
            # Nothing is served without the session token.
            assert (await server.get("/api/config", token=False)).status == 401
            # What the viewer's extractContext wrote reaches the agent first.
            tab = await server.tab()
            context = f'<viewer-context mode="{MODE}" file="welcome.md" line="1" block="heading">'
            await tab.say("Shorten this", viewer_context=context)
            assert await server.agent.next_user_message() == f"{context}\n\nShorten this"

    asyncio.run(scenario())


def test_a_pinned_block_is_marked_and_goes_to_the_agent_as_a_review(mode: LoadedMode, workspace: Path):
    # Annotate (the viewer declares it): in the real page in Chromium, a click
    # on a heading becomes pin 1 with a comment, the viewer draws its marker,
    # the workspace keeps it, and "Send review" gives the agent one message
    # holding the pin's <viewer-context> and comment.
    async def scenario() -> None:
        async with serve(mode, workspace) as server, shell_page(server) as page:
            await page.locator(".annotate-toggle").click()
            await page.locator('.pm-page [data-line="1"]').click()
            box = page.locator(".pin-box textarea")
            await box.fill('Shorter, "please"')
            await box.press("Enter")
            marker = page.locator('.pm-page [data-line="1"] .pm-pin')
            await marker.wait_for()
            assert await marker.inner_text() == "1"
            pins = (await (await server.get("/api/review/pins")).json())["pins"]
            assert [(p["number"], p["comment"], p["status"]) for p in pins] == [(1, 'Shorter, "please"', "open")]
            assert pins[0]["selection"]["file"] == "welcome.md" and pins[0]["selection"]["line"] == 1
            assert pins[0]["place"].startswith("# Welcome to ")
            await page.locator(".review-send").click()
            message = await server.agent.next_user_message()
            assert message.startswith('<viewer-review pins="1">\n<pin n="1" comment="Shorter, &quot;please&quot;">\n'
                                      f'<viewer-context mode="{MODE}" file="welcome.md" line="1" block="heading">')
            assert message.endswith("Please address these review comments.")
            await page.locator('.pin-item[data-status="sent"]').wait_for()

    asyncio.run(scenario())


def test_manifest_is_plain_json():
    # Pneuma reads manifest.json with a strict schema; keep it hand-editable JSON.
    data = json.loads((PACKAGE_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert data["name"] == MODE
