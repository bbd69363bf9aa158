"""The draw mode: manifest, seed drawing, skill.

What every seeded mode's setup promises (no seeds over the person's own
work, a second skill install changes nothing) is in test_mode_setup.py.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace
from pneuma.workspace.skill import install_skill

SEED = "welcome.excalidraw"


@pytest.fixture(scope="module")
def mode():
    return get_mode("draw")


@pytest.fixture
def drawing(seeded):
    return json.loads((seeded / SEED).read_text(encoding="utf-8"))


def _checker(mode):
    path = mode.skill_dir / "scripts" / "check_drawing.py"
    spec = importlib.util.spec_from_file_location("pneuma_draw_check_drawing", path)
    module = importlib.util.module_from_spec(spec)
    previous = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # no __pycache__ inside the installed skill
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = previous
    return module


# --- the mode ---


def test_mode_loads_as_a_single_drawing_workspace(mode):
    manifest = mode.manifest
    assert manifest.name == "draw"
    assert manifest.layout == "editor"
    assert manifest.display_name == {"en": "Drawing", "zh-CN": "绘图"}
    assert manifest.icon and manifest.icon.startswith("<svg")
    assert manifest.skill.install_name == "pneuma-draw"
    workspace = manifest.viewer_api.workspace
    assert (workspace.type, workspace.multi_file, workspace.ordered, workspace.has_active_file) == (
        "single", False, False, True,
    )
    assert manifest.viewer.watch_patterns == ["**/*.excalidraw"]
    assert ".pneuma/**" in manifest.viewer.ignore_patterns
    assert manifest.viewer.module == "viewer.js"
    assert (mode.static_dir / "viewer.js").is_file()
    assert manifest.init.content_check_pattern == "**/*.excalidraw"
    assert manifest.init.seed_files == {"seeds/": "."}
    assert manifest.agent.greeting


def test_actions_the_agent_can_call(mode):
    actions = {a.id: a for a in mode.manifest.agent_actions}
    assert {"navigate-to", "describe-view", "capture-screenshot"} <= set(actions)
    assert actions["navigate-to"].params["file"].required
    assert actions["navigate-to"].category == "navigate"
    assert ".pneuma/captures/" in actions["capture-screenshot"].description
    assert mode.manifest.viewer_api.commands


def test_diagram_workflow_looks_at_its_work(mode):
    workflows = {w.id: w for w in mode.manifest.workflows}
    steps = workflows["diagram"].steps
    assert steps[0].requires_confirmation and steps[0].prompt
    assert "capture-screenshot" in [s.action for s in steps]
    actions = {a.id for a in mode.manifest.viewer_api.actions}
    assert all(s.action in actions for s in steps if s.action)


# --- the seed drawing ---


def test_seeding_an_empty_workspace_gives_the_drawing(mode, tmp_path):
    result = init_workspace(mode, tmp_path)
    assert result.seeded == [SEED]


def test_seed_is_an_excalidraw_file(drawing):
    assert drawing["type"] == "excalidraw"
    assert drawing["version"] == 2
    assert isinstance(drawing["source"], str)
    assert isinstance(drawing["appState"], dict)
    assert drawing["appState"]["viewBackgroundColor"]
    assert drawing["files"] == {}
    elements = drawing["elements"]
    assert 10 <= len(elements) <= 40
    kinds = {e["type"] for e in elements}
    assert {"rectangle", "ellipse", "diamond", "arrow", "text"} <= kinds
    common = {
        "id", "type", "x", "y", "width", "height", "angle", "strokeColor", "backgroundColor",
        "fillStyle", "strokeWidth", "strokeStyle", "roughness", "opacity", "groupIds",
        "frameId", "roundness", "seed", "version", "versionNonce", "isDeleted",
        "boundElements", "updated", "link", "locked",
    }
    for element in elements:
        assert common <= set(element), element["id"]
        assert not element["isDeleted"]
    title = elements[0]
    assert title["type"] == "text" and title["containerId"] is None
    assert "Pneuma" in title["text"] and title["fontSize"] >= 28


def test_seed_ids_are_unique(drawing):
    ids = [e["id"] for e in drawing["elements"]]
    assert len(ids) == len(set(ids))
    indices = [e["index"] for e in drawing["elements"] if "index" in e]
    assert indices == sorted(indices) and len(set(indices)) == len(indices)


def test_seed_labels_are_bound_both_ways(drawing):
    by_id = {e["id"]: e for e in drawing["elements"]}
    labelled = 0
    for element in drawing["elements"]:
        if element["type"] == "text" and element["containerId"] is not None:
            container = by_id[element["containerId"]]
            assert {"type": "text", "id": element["id"]} in container["boundElements"]
            assert element["text"] == element["originalText"]
            # Centred on its container (shapes) and narrow enough to fit.
            if container["type"] != "arrow":
                cx = container["x"] + container["width"] / 2
                cy = container["y"] + container["height"] / 2
                assert abs(element["x"] + element["width"] / 2 - cx) < 1
                assert abs(element["y"] + element["height"] / 2 - cy) < 1
                assert element["width"] <= container["width"] - 10
            labelled += 1
        for entry in element["boundElements"] or []:
            other = by_id[entry["id"]]
            if entry["type"] == "text":
                assert other["containerId"] == element["id"]
            else:
                assert entry["type"] == "arrow"
                assert element["id"] in (
                    other["startBinding"]["elementId"], other["endBinding"]["elementId"]
                )
    shapes = [e for e in drawing["elements"] if e["type"] in {"rectangle", "ellipse", "diamond"}]
    assert all(any(b["type"] == "text" for b in s["boundElements"] or []) for s in shapes)
    assert labelled >= len(shapes)


def test_seed_arrows_are_bound_at_both_ends(drawing):
    by_id = {e["id"]: e for e in drawing["elements"]}
    arrows = [e for e in drawing["elements"] if e["type"] == "arrow"]
    assert len(arrows) >= 4
    for arrow in arrows:
        points = arrow["points"]
        assert len(points) >= 2 and points[0] == [0, 0]
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        assert arrow["width"] == max(xs) - min(xs) and arrow["height"] == max(ys) - min(ys)
        for key, point in (("startBinding", points[0]), ("endBinding", points[-1])):
            binding = arrow[key]
            assert binding is not None, f"{arrow['id']} {key}"
            shape = by_id[binding["elementId"]]
            assert shape["type"] in {"rectangle", "ellipse", "diamond"}
            assert {"type": "arrow", "id": arrow["id"]} in shape["boundElements"]
            # The end is drawn `gap` px outside the shape's box, on one side.
            px, py = arrow["x"] + point[0], arrow["y"] + point[1]
            gap = binding["gap"]
            left, top = shape["x"], shape["y"]
            right, bottom = left + shape["width"], top + shape["height"]
            assert min(abs(px - (left - gap)), abs(px - (right + gap)),
                       abs(py - (top - gap)), abs(py - (bottom + gap))) < 1
            assert left - gap - 1 <= px <= right + gap + 1
            assert top - gap - 1 <= py <= bottom + gap + 1


def test_bundled_checker_passes_the_seed_and_catches_breakage(mode, drawing):
    checker = _checker(mode)
    assert checker.check_data(drawing) == ([], [])

    broken = json.loads(json.dumps(drawing))
    by_id = {e["id"]: e for e in broken["elements"]}
    arrow = next(e for e in broken["elements"] if e["type"] == "arrow")
    target = by_id[arrow["endBinding"]["elementId"]]
    target["boundElements"] = [b for b in target["boundElements"] if b["id"] != arrow["id"]]
    label = next(e for e in broken["elements"] if e["type"] == "text" and e["containerId"])
    label["containerId"] = "no-such-shape"
    broken["elements"].append(dict(by_id[target["id"]]))  # duplicate id
    errors, _ = checker.check_data(broken)
    text = "\n".join(errors)
    assert f"duplicate id '{target['id']}'" in text
    assert "does not list it" in text
    assert "'no-such-shape' does not exist" in text

    moved = json.loads(json.dumps(drawing))
    shape = next(e for e in moved["elements"] if e["type"] == "rectangle")
    shape["x"] += 400  # its arrows now end far away from it
    errors, warnings = checker.check_data(moved)
    assert errors == [] and any("is far from" in w for w in warnings)


# --- the skill ---


def test_skill_installs_with_the_format_and_actions(mode, seeded):
    install_skill(mode, seeded, {})
    skill = seeded / ".claude/skills/pneuma-draw"
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    assert text.startswith("---\nname: pneuma-draw\ndescription: ")
    for needle in ('"type": "excalidraw"', "containerId", "startBinding", "boundElements",
                   "versionNonce", '"actionId"', "<viewer-context", "capture-screenshot"):
        assert needle in text, needle
    assert '"action":' not in text
    assert (skill / "references/elements.md").is_file()
    assert (skill / "scripts/check_drawing.py").is_file()
    claude = (seeded / "CLAUDE.md").read_text(encoding="utf-8")
    for action in ("navigate-to", "describe-view", "capture-screenshot", "zoom-to-fit"):
        assert f"`{action}`" in claude, action
    assert "pneuma-draw/SKILL.md" in claude
    assert (seeded / ".claude/commands/diagram.md").is_file()
