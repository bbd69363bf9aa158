"""The diagram mode's viewer (plugins/diagram/pneuma_diagram/static/viewer.js)
in the real shell, with the real mermaid bundle.

Each test opens a page of its own on `pneuma run --mode diagram` over a
workspace as seeded (architecture.mmd, message-flow.mmd; the tests without
an agent share one server and get the seeded diagrams back), and drives it in Debian's
Chromium: what the person sees is read from the DOM, viewer actions are
asked over HTTP exactly as the agent asks them, files are edited on disk as
the agent edits them, and the viewer context is read back from what the fake
CLI received. Screenshots land in $PNEUMA_SCREENSHOTS.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import drag, send_and_read, viewer_answer
from tests.browser.export_menu import download_export, open_export_menu
from tests.browser.module_run import module_run

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "plugins" / "diagram" / "pneuma_diagram" / "static" / "vendor" / "mermaid.iife.js"
TURN = 15_000  # ms a fake CLI turn may take
RENDERED = ".pneuma-diagram[data-state=rendered] .dg-stage svg"

pytestmark = pytest.mark.skipif(
    not VENDOR.exists(), reason="the diagram viewer's mermaid bundle is not built (scripts/build-web)"
)


def wait_rendered(page: Any) -> Any:
    page.wait_for_selector(RENDERED, timeout=20_000)
    return page


@pytest.fixture(scope="module")
def agentless_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, bytes]]]:
    """One diagram-mode server without an agent for the module, and the
    diagrams it seeded."""
    with module_run(tmp_path_factory.mktemp("diagram"), "diagram") as server:
        yield server, {p.name: p.read_bytes() for p in server.workspace.glob("*.mmd")}


@pytest.fixture
def diagram(agentless_run: tuple[Any, dict[str, bytes]], open_page: Any) -> Iterator[tuple[Any, Any]]:
    """The module's diagram-mode server without an agent, its workspace as
    seeded, and a page of its own on it. Afterwards the workspace is as
    seeded again (the diagrams the test wrote are gone), and the page has
    been told so before it closes: no late file update reaches the next
    test's page."""
    server, seeded = agentless_run
    page = wait_rendered(open_page(server, viewport={"width": 1400, "height": 900}))
    yield server, page
    for path in server.workspace.glob("*.mmd"):
        if path.name not in seeded:
            path.unlink()
    for name, content in seeded.items():
        if (server.workspace / name).read_bytes() != content:
            (server.workspace / name).write_bytes(content)
    expect(page.locator(".dg-tab")).to_have_count(len(seeded), timeout=20_000)


def zoom_text(page: Any) -> str:
    return page.locator(".dg-zoom").inner_text()


def test_the_seed_renders_with_a_tab_per_file(diagram: tuple[Any, Any], shot: Any) -> None:
    server, page = diagram
    tabs = page.eval_on_selector_all(".dg-tab", "els => els.map(e => e.dataset.path)")
    assert tabs == ["architecture.mmd", "message-flow.mmd"]
    assert page.get_attribute(".dg-tab[aria-selected=true]", "data-path") == "architecture.mmd"
    # mermaid drew the seed's nodes with their labels
    labels = page.eval_on_selector_all(".dg-stage g.node", "els => els.map(e => e.textContent.trim())")
    assert "aiohttp server" in labels and "Workspace files" in labels
    # fitted: the whole drawing is inside the canvas
    fits = page.evaluate("""() => {
        const c = document.querySelector('.dg-canvas').getBoundingClientRect();
        const s = document.querySelector('.dg-stage svg').getBoundingClientRect();
        return s.left >= c.left - 1 && s.right <= c.right + 1 && s.top >= c.top - 1 && s.bottom <= c.bottom + 1;
    }""")
    assert fits
    view = viewer_answer(server, "describe-view")
    assert view["success"] and view["data"]["file"] == "architecture.mmd"
    assert view["data"]["type"] == "flowchart-v2" and view["data"]["rendered"] is True
    assert {"Server", "Agent", "Workspace"} <= set(view["data"]["nodes"])
    shot(page, "diagram-seed")
    page.locator(".dg-tab[data-path='message-flow.mmd']").click()
    expect(page.locator(".dg-stage [data-type=participant][data-id=Agent]").first).to_be_visible()
    assert viewer_answer(server, "describe-view")["data"]["type"] == "sequence"
    shot(page, "diagram-sequence")
    assert page.console_errors == []


def test_a_clicked_node_and_edge_reach_the_agent(
        pneuma_server: Any, fake_claude: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("diagram", claude_bin=fake_claude.bin)
    page = wait_rendered(open_page(server, viewport={"width": 1400, "height": 900}))
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    page.locator(".dg-stage g.node[data-node-id=Server]").click()
    chip = page.locator(".ctx-row .ctx-chip")
    expect(chip).to_contain_text("Server")
    expect(chip).to_contain_text("aiohttp server")
    expect(chip).to_contain_text("line 9")  # Server["aiohttp server"] is on line 9 of the seed
    shot(page, "diagram-node-selected")
    assert send_and_read(page, fake_claude, "Split this in two.", turns=2, timeout=TURN) == (
        '<viewer-context mode="diagram" file="architecture.mmd" kind="node" id="Server" line="9">'
        "aiohttp server</viewer-context>\n\nSplit this in two."
    )
    page.locator(".dg-stage g.edgeLabel", has_text="stream-json").click()
    expect(chip).to_contain_text("Session → Agent")
    # the label and the line of the edge light up together
    expect(page.locator(".dg-stage .pneuma-selected")).to_have_count(2)
    expect(chip).to_contain_text("line 21")
    # The agent adds a line above it: the same edge stays selected, now at line 22.
    source = server.workspace / "architecture.mmd"
    source.write_text("%% edited\n" + source.read_text(encoding="utf-8"), encoding="utf-8")
    expect(chip).to_contain_text("line 22")
    expect(page.locator(".dg-stage .pneuma-selected")).to_have_count(2)
    assert send_and_read(page, fake_claude, "Name the protocol.", turns=3, timeout=TURN) == (
        '<viewer-context mode="diagram" file="architecture.mmd" kind="edge" id="L_Session_Agent_0" '
        'from="Session" to="Agent" line="22">stream-json</viewer-context>\n\nName the protocol.'
    )
    assert page.console_errors == []


SEQUENCE_BLOCKS = (
    "sequenceDiagram\n  participant A\n  participant B\n  loop Every minute\n    A->>B: ping\n  end\n"
    "  alt is sick\n    B->>A: not good\n  else is well\n    B->>A: fine\n  end\n"
    "  Note right of B: side note\n  rect rgb(200, 220, 255)\n    A->>B: inside\n  end\n"
)
CLASS_MEMBERS = (
    "classDiagram\n  class Animal {\n    +String name\n    +eat()\n  }\n  class Duck\n"
    "  Duck : +swim()\n  Duck : +String beak\n  Animal <|-- Duck\n"
)
GIT_GRAPH = (
    "gitGraph\n  commit id: \"init\"\n  commit tag: \"v1\"\n  branch develop\n  checkout develop\n"
    "  commit id: \"feat\"\n  checkout main\n  merge develop\n"
)
REQUIREMENTS = (
    "requirementDiagram\n  requirement test_req {\n    id: 1\n    text: the test text.\n    risk: high\n"
    "    verifymethod: test\n  }\n  element test_entity {\n    type: simulation\n  }\n"
    "  test_entity - satisfies -> test_req\n"
)
C4 = (
    "C4Context\n  title System Context\n  Person(customerA, \"Banking Customer A\", \"A customer\")\n"
    "  System(SystemAA, \"Internet Banking System\", \"Allows customers\")\n  Rel(customerA, SystemAA, \"Uses\")\n"
)

# One small diagram of each type the viewer maps back to its source, what to
# click (by what the person sees: mermaid's own classes and the label), what
# the chip must say and the <viewer-context> the agent must get: the id or
# name as the source writes it, and the line that says it.
SELECTION_CASES: list[tuple[str, str, tuple[str, str], list[str], str]] = [
    ("sequence.mmd",
     "sequenceDiagram\n  actor Alice\n  participant Bob as Bobby\n  Alice->>Bob: Hello Bob\n  Bob-->>Alice: Hi Alice\n",
     ("text.messageText", "Hi Alice"), ["Bob → Alice", "“Hi Alice”", "line 5"],
     'kind="edge" from="Bob" to="Alice" line="5">Hi Alice'),
    ("participant.mmd",
     "sequenceDiagram\n  actor Alice\n  participant Bob as Bobby\n  Alice->>Bob: Hello Bob\n",
     ("text.actor", "Bobby"), ["Bob", "“Bobby”", "line 3"],
     'kind="node" id="Bob" line="3">Bobby'),
    ("classes.mmd",
     "classDiagram\n  class Animal {\n    +String name\n    +eat()\n  }\n  class Duck\n  Animal <|-- Duck : inherits\n",
     ("g.node", "Duck"), ["Duck", "line 6"],
     'kind="node" id="Duck" line="6">Duck'),
    ("states.mmd",
     "stateDiagram-v2\n  [*] --> Idle\n  state \"Waiting for input\" as Waiting\n  Idle --> Waiting : start\n"
     "  Waiting --> [*]\n",
     ("g.node", "Waiting for input"), ["Waiting", "“Waiting for input”", "line 3"],
     'kind="node" id="Waiting" line="3">Waiting for input'),
    ("entities.mmd",
     "erDiagram\n  CUSTOMER {\n    string name\n  }\n  CUSTOMER ||--o{ ORDER : places\n"
     "  ORDER ||--|{ LINE_ITEM : contains\n",
     ("g.edgeLabel", "contains"), ["ORDER → LINE_ITEM", "“contains”", "line 6"],
     'kind="edge" from="ORDER" to="LINE_ITEM" line="6">contains'),
    ("ideas.mmd",
     "mindmap\n  root((Pneuma))\n    Modes\n      Slides\n    Agent[Code agent]\n",
     ("g.node", "Code agent"), ["Agent", "“Code agent”", "line 5"],
     'kind="node" id="Agent" line="5">Code agent'),
    ("plan.mmd",
     "gantt\n  title Release\n  dateFormat YYYY-MM-DD\n  section Build\n  Design :des1, 2024-01-01, 3d\n"
     "  Code :code1, after des1, 5d\n",
     ("text.taskText", "Design"), ["des1", "“Design”", "line 5"],
     'kind="task" id="des1" line="5">Design'),
    ("pets.mmd",
     "pie title Pets\n  \"Dogs\" : 386\n  \"Cats\" : 85\n",
     ("g.legend", "Cats"), ["Cats", "line 3"],
     'kind="slice" id="Cats" line="3">Cats: 85'),
    ("day.mmd",
     "journey\n  title My day\n  section Morning\n    Make tea: 5: Me\n    Go to work: 2: Me, Cat\n",
     ("rect.task", ""), ["Make tea", "line 4"],  # its text (HTML in a foreignObject) covers the middle
     'kind="task" id="Make tea" line="4">Make tea'),
    ("history.mmd",
     "timeline\n  title History\n  2002 : LinkedIn\n  2004 : Facebook\n       : Google\n",
     ("g.timeline-node", "Google"), ["Google", "line 5"],
     'kind="event" id="Google" line="5">Google'),
    # a sequence's frames: the keyword and its text, a section of it, a note, a coloured rect
    ("loop.mmd", SEQUENCE_BLOCKS, ("text.loopText", "Every minute"), ["loop", "“Every minute”", "line 4"],
     'kind="block" id="loop" line="4">Every minute'),
    ("alt.mmd", SEQUENCE_BLOCKS, ("text.labelText", "alt"), ["alt", "“is sick”", "line 7"],
     'kind="block" id="alt" line="7">is sick'),
    ("else.mmd", SEQUENCE_BLOCKS, ("text.sectionTitle", "is well"), ["else", "“is well”", "line 9"],
     'kind="block" id="else" line="9">is well'),
    ("note.mmd", SEQUENCE_BLOCKS, ("text.noteText", "side note"), ["“side note”", "line 12"],
     'kind="note" line="12">side note'),
    ("rect.mmd", SEQUENCE_BLOCKS, ("rect.rect", ""), ["rect", "“rgb(200, 220, 255)”", "line 13"],
     'kind="block" id="rect" line="13">rgb(200, 220, 255)'),
    # a class's attribute and method, in its { } block or in a `Class : member` statement
    ("member.mmd", CLASS_MEMBERS, ("g.methods-group g.label", "+eat()"), ["Animal : +eat()", "line 4"],
     'kind="member" of="Animal" id="+eat()" line="4">+eat()'),
    ("attribute.mmd", CLASS_MEMBERS, ("g.members-group g.label", "+String beak"),
     ["Duck : +String beak", "line 8"],
     'kind="member" of="Duck" id="+String beak" line="8">+String beak'),
    ("commit.mmd", GIT_GRAPH, ("text.commit-label", "feat"), ["feat", "line 6"],
     'kind="commit" id="feat" line="6">feat'),
    ("tag.mmd", GIT_GRAPH, ("text.tag-label", "v1"), ["“commit tag: v1”", "line 3"],
     'kind="commit" line="3">commit tag: v1'),
    ("branch.mmd", GIT_GRAPH, ("g.branchLabel g.label", "develop"), ["develop", "line 4"],
     'kind="branch" id="develop" line="4">develop'),
    ("quadrant.mmd",
     "quadrantChart\n  title Reach\n  x-axis Low Reach --> High Reach\n  y-axis Low Engagement --> High Engagement\n"
     "  quadrant-1 Expand\n  quadrant-2 Promote\n  Campaign A: [0.3, 0.6]\n  Campaign B: [0.45, 0.23]\n",
     ("g.data-point", "Campaign B"), ["Campaign B", "line 8"],
     'kind="point" id="Campaign B" line="8">Campaign B'),
    ("requirement.mmd", REQUIREMENTS, ("g.node", "test_entity"), ["test_entity", "line 8"],
     'kind="node" id="test_entity" line="8">test_entity'),
    ("satisfies.mmd", REQUIREMENTS, ("g.edgeLabel", "satisfies"), ["test_entity → test_req", "“satisfies”", "line 11"],
     'kind="edge" from="test_entity" to="test_req" line="11">satisfies'),
    ("c4.mmd", C4, ("g.c4-shape", "Internet Banking System"), ["SystemAA", "“Internet Banking System”", "line 4"],
     'kind="node" id="SystemAA" line="4">Internet Banking System'),
    ("c4-rel.mmd", C4, ("text", "Uses"), ["customerA → SystemAA", "line 5"],
     'kind="edge" from="customerA" to="SystemAA" line="5">Uses'),
    ("sankey.mmd",
     "sankey\n  Agricultural waste,Bio-conversion,124.729\n  Bio-conversion,Liquid,0.597\n  Bio-conversion,Losses,26.862\n",
     (".node-labels text", "Losses"), ["Losses", "line 4"],
     'kind="node" id="Losses" line="4">Losses'),
    ("xychart.mmd",
     "xychart\n  title \"Sales Revenue\"\n  x-axis [jan, feb, mar]\n  y-axis \"Revenue\" 4000 --> 11000\n"
     "  bar [5000, 6000, 7500]\n  line [5000, 6000, 7500]\n",
     ("g.bar-plot-0 rect", ""), ["bar", "“[5000, 6000, 7500]”", "line 5"],
     'kind="series" id="bar" line="5">[5000, 6000, 7500]'),
    ("axis.mmd",
     "xychart\n  title \"Sales Revenue\"\n  x-axis [jan, feb, mar]\n  y-axis \"Revenue\" 4000 --> 11000\n"
     "  bar [5000, 6000, 7500]\n",
     ("g.left-axis text", "Revenue"), ["Revenue", "line 4"],
     'kind="label" id="Revenue" line="4">Revenue'),
    ("block.mmd", "block\n  columns 3\n  a[\"Alpha\"] b[\"Beta\"] c\n  a --> b\n",
     ("g.node", "Beta"), ["b", "“Beta”", "line 3"],
     'kind="node" id="b" line="3">Beta'),
    ("architecture.mmd",
     "architecture-beta\n  group api(cloud)[API]\n  service db(database)[Database] in api\n"
     "  service server(server)[Server] in api\n  db:L -- R:server\n",
     ("g.architecture-service text", "Database"), ["db", "“Database”", "line 3"],
     'kind="node" id="db" line="3">Database'),
    ("kanban.mmd", "kanban\n  todo[Todo]\n    t1[Write docs]\n    t2[Fix bug]\n  done[Done]\n    t3[Ship it]\n",
     ("g.node", "Fix bug"), ["t2", "“Fix bug”", "line 4"],
     'kind="node" id="t2" line="4">Fix bug'),
    ("packet.mmd", "packet\n  0-15: \"Source Port\"\n  16-31: \"Destination Port\"\n",
     ("text.packetLabel", "Destination Port"), ["Destination Port", "line 3"],
     'kind="field" id="Destination Port" line="3">Destination Port'),
    ("radar.mmd", "radar-beta\n  axis A, B, C\n  curve c1{1,2,3}\n  curve c2{3,2,1}\n",
     ("text.radarLegendText", "c2"), ["c2", "line 4"],
     'kind="curve" id="c2" line="4">c2'),
    ("treemap.mmd",
     "treemap-beta\n\"Section 1\"\n    \"Leaf 1.1\": 12\n\"Section 2\"\n    \"Leaf 2.1\": 20\n",
     ("g.treemapNode", "Leaf 2.1"), ["Leaf 2.1", "line 5"],
     'kind="node" id="Leaf 2.1" line="5">Leaf 2.1'),
    # types whose database names nothing: the clicked text, at the line that writes it
    ("venn.mmd", "venn-beta\n  title Fruit\n  set A[\"Apples\"]\n  set B[\"Bananas\"]\n  union A,B[\"Both\"]\n",
     ("g.venn-area text", "Bananas"), ["Bananas", "line 4"],
     'kind="label" id="Bananas" line="4">Bananas'),
    ("ishikawa.mmd", "ishikawa-beta\n  Slow builds\n    People\n      Not trained\n    Tools\n      Old compiler\n",
     ("g.ishikawa-label-group", "Tools"), ["Tools", "line 5"],
     'kind="label" id="Tools" line="5">Tools'),
    ("wardley.mmd", "wardley-beta\n  title Tea shop\n  component Cup [0.73, 0.78]\n  component Tea [0.63, 0.81]\n"
     "  Cup -> Tea\n",
     ("g.wardley-node text", "Tea"), ["Tea", "line 4"],  # not the title's line 2
     'kind="label" id="Tea" line="4">Tea'),
    ("tree.mmd", "treeView-beta\n  root\n    src\n      main.py\n    docs\n",
     ("g.tree-view text", "main.py"), ["main.py", "line 4"],
     'kind="label" id="main.py" line="4">main.py'),
    ("swimlane.mmd", "swimlane-beta\n  A[Start] --> B[Stop]\n",
     ("g.node", "Stop"), ["B", "“Stop”", "line 2"],
     'kind="node" id="B" line="2">Stop'),
]


def test_a_selection_names_its_source_id_and_line_in_every_diagram_type(
        pneuma_server: Any, fake_claude: Any, open_page: Any, tmp_path: Path, shot: Any) -> None:
    workspace = tmp_path / "every-type"
    workspace.mkdir()
    for file, source, *_ in SELECTION_CASES:
        (workspace / file).write_text(source, encoding="utf-8")
    server = pneuma_server("diagram", claude_bin=fake_claude.bin, workspace=workspace)
    page = wait_rendered(open_page(server, viewport={"width": 1400, "height": 900}))
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    chip = page.locator(".ctx-row .ctx-chip")
    for turn, (file, _, (selector, text), chip_texts, context) in enumerate(SELECTION_CASES, start=2):
        answer = viewer_answer(server, "navigate-to", {"file": file})
        assert answer["success"] and answer["data"]["rendered"], (file, answer)
        wait_rendered(page)
        target = page.locator(f".dg-stage {selector}", has_text=text) if text else page.locator(f".dg-stage {selector}")
        if text:
            target.first.click()
        else:  # a box whose label covers its middle: a point near its bottom right corner
            box = target.first.bounding_box()
            assert box, file
            page.mouse.click(box["x"] + box["width"] - 6, box["y"] + box["height"] - 6)
        for expected in chip_texts:
            expect(chip, f"{file}: the chip").to_contain_text(expected)
        shot(page, f"diagram-select-{file.removesuffix('.mmd')}")
        said = send_and_read(page, fake_claude, "This one.", turns=turn, timeout=TURN)
        assert said.startswith(f'<viewer-context mode="diagram" file="{file}" {context}</viewer-context>'), (file, said)
    assert page.console_errors == []


def test_a_selected_member_or_frame_follows_its_line_when_the_agent_edits(diagram: tuple[Any, Any]) -> None:
    server, page = diagram
    chip = page.locator(".ctx-row .ctx-chip")
    for file, source, (selector, text), before, after in [
        ("member.mmd", CLASS_MEMBERS, ("g.methods-group g.label", "+eat()"), "line 4", "line 6"),
        ("else.mmd", SEQUENCE_BLOCKS, ("text.sectionTitle", "is well"), "line 9", "line 11"),
    ]:
        path = server.workspace / file
        path.write_text(source, encoding="utf-8")
        assert viewer_answer(server, "navigate-to", {"file": file})["data"]["rendered"]
        wait_rendered(page)
        page.locator(f".dg-stage {selector}", has_text=text).first.click()
        expect(chip).to_contain_text(before)
        selected = page.locator(".dg-stage .pneuma-selected")
        expect(selected).to_have_count(1)
        # two lines above it: the same member (not its class, not another member) stays selected
        path.write_text(source.replace("\n", "\n%% one\n%% two\n", 1), encoding="utf-8")
        expect(chip).to_contain_text(after)
        expect(selected).to_have_count(1)
        expect(selected).to_have_text(text if file == "member.mmd" else f"[{text}]")
        assert viewer_answer(server, "describe-view")["data"]["selection"]["line"] == int(after.split()[1])
    assert page.console_errors == []


def test_a_syntax_error_is_shown_at_its_line_and_recovers(diagram: tuple[Any, Any], shot: Any) -> None:
    server, page = diagram
    broken = server.workspace / "broken.mmd"
    broken.write_text("flowchart TD\n  A[Start] --> B\n  B -->> C\n  C --> D\n", encoding="utf-8")
    answer = viewer_answer(server, "navigate-to", {"file": "broken.mmd"})
    assert answer["success"], answer
    assert answer["data"]["rendered"] is False and answer["data"]["error"]["line"] == 3
    assert "line 3" in answer["message"]
    error = page.locator(".dg-error")
    expect(error.locator("h3")).to_have_text("Syntax error at line 3")
    expect(error.locator(".dg-message")).to_contain_text("Parse error on line 3")
    expect(error.locator(".dg-source li.bad")).to_have_text("  B -->> C")
    expect(page.locator(".dg-canvas")).to_be_hidden()
    shot(page, "diagram-syntax-error")
    broken.write_text("flowchart TD\n  A[Start] --> B\n  B --> C\n  C --> D\n", encoding="utf-8")
    wait_rendered(page)
    expect(page.locator(".dg-error")).to_have_count(0)
    assert viewer_answer(server, "describe-view")["data"]["nodes"] == ["A", "B", "C", "D"]


def test_zoom_pan_and_theme(diagram: tuple[Any, Any], shot: Any) -> None:
    server, page = diagram
    assert viewer_answer(server, "ui:zoom", {"zoom": "2"})["data"]["zoom"] == 2
    expect(page.locator(".dg-zoom")).to_have_text("200%")
    page.locator(".dg-btn[data-act='zoom-out']").click()
    expect(page.locator(".dg-zoom")).to_have_text("160%")
    before = page.locator(".dg-stage svg").bounding_box()
    canvas = page.locator(".dg-canvas").bounding_box()
    drag(page, (canvas["x"] + 40, canvas["y"] + 40), (canvas["x"] + 140, canvas["y"] + 90))
    after = page.locator(".dg-stage svg").bounding_box()
    assert round(after["x"] - before["x"]) == 100 and round(after["y"] - before["y"]) == 50
    page.mouse.wheel(0, -300)
    assert zoom_text(page) != "160%"
    page.locator(".dg-btn[data-act='fit']").click()
    assert viewer_answer(server, "describe-view")["data"]["zoom"] < 1.5
    # dark: mermaid's dark theme on a dark canvas
    answer = viewer_answer(server, "ui:set-theme", {"theme": "dark"})
    assert answer["data"]["theme"] == "dark"
    expect(page.locator(".pneuma-diagram")).to_have_attribute("data-theme", "dark")
    wait_rendered(page)
    canvas_bg = page.evaluate("getComputedStyle(document.querySelector('.dg-canvas')).backgroundColor")
    assert canvas_bg == "rgb(31, 32, 35)"
    node_fill = page.evaluate(
        "getComputedStyle(document.querySelector('.dg-stage g.node rect, .dg-stage g.node path')).fill")
    assert node_fill != "rgb(236, 236, 255)", "the nodes kept the light theme's fill"
    shot(page, "diagram-dark")
    page.locator(".dg-btn[data-act='theme']").click()
    expect(page.locator(".pneuma-diagram")).to_have_attribute("data-theme", "light")
    assert page.console_errors == []


def test_navigate_to_centres_a_node_and_reports_unknown_ones(diagram: tuple[Any, Any]) -> None:
    server, page = diagram
    answer = viewer_answer(server, "navigate-to", {"file": "architecture.mmd", "node": "Tools"})
    assert answer["success"], answer
    centred = page.evaluate("""() => {
        const c = document.querySelector('.dg-canvas').getBoundingClientRect();
        const n = document.querySelector('.dg-stage g.node[data-node-id=Tools]').getBoundingClientRect();
        return [Math.abs((n.left + n.right) / 2 - (c.left + c.right) / 2),
                Math.abs((n.top + n.bottom) / 2 - (c.top + c.bottom) / 2)];
    }""")
    assert max(centred) < 2, centred
    expect(page.locator(".dg-stage g.node[data-node-id=Tools].pneuma-selected")).to_have_count(1)
    missing = viewer_answer(server, "navigate-to", {"file": "architecture.mmd", "node": "Nope"})
    assert missing["success"] is False and "Tools" in missing["message"]
    gone = viewer_answer(server, "navigate-to", {"file": "nothing.mmd"})
    assert gone["success"] is False and "architecture.mmd" in gone["message"]


def test_the_export_menu_downloads_every_diagram_as_svg(diagram: tuple[Any, Any], shot: Any) -> None:
    server, page = diagram
    assert open_export_menu(page) == ["svg", "png", "svg-dark", "png-dark"]
    assert "SVG (one file per diagram)" in page.inner_text(".export-menu .menu-pop")
    download = download_export(page, "svg")
    assert download.suggested_filename.endswith("-svg.zip")
    with zipfile.ZipFile(download.path()) as archive:
        assert sorted(archive.namelist()) == ["architecture.svg", "message-flow.svg"]
        svg = ET.fromstring(archive.read("architecture.svg"))
    labels = " ".join(" ".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text"))
    assert "aiohttp" in labels and "Workspace" in labels
    page.wait_for_selector(".export-note.ok")
    shot(page, "diagram-export-menu")
