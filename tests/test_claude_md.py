"""Pneuma's marker sections in CLAUDE.md: replaced in place, nothing else
touched, malformed markers refused with line numbers."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pneuma.cli import cli
from pneuma.host.modes import ClaudeMdSection
from pneuma.host.registry import get_mode
from pneuma.workspace.claude_md import (
    MarkerError,
    find_sections,
    read_section,
    update_sections,
)
from pneuma.workspace.skill import install_skill

SKILL = ClaudeMdSection("", "## Pneuma Demo Mode\n\nRead the skill first.")
VIEWER = ClaudeMdSection("viewer-api", "## Viewer API\n\nNo actions.")

SKILL_BLOCK = (
    "<!-- pneuma:start -->\n## Pneuma Demo Mode\n\nRead the skill first.\n<!-- pneuma:end -->"
)
VIEWER_BLOCK = (
    "<!-- pneuma:viewer-api:start -->\n## Viewer API\n\nNo actions.\n"
    "<!-- pneuma:viewer-api:end -->"
)


def test_sections_are_appended_to_an_empty_file():
    text = update_sections("", [SKILL, VIEWER])
    assert text == f"{SKILL_BLOCK}\n\n{VIEWER_BLOCK}\n"


@pytest.mark.parametrize(
    "user",
    [
        "# My project\n\nUse tabs, not spaces.\n",
        "# My project\r\n\r\nWindows line endings.\r\n",
        "No trailing newline",
        "Trailing blank lines\n\n\n",
        "Unicode: 你好, ümlaut, emoji 🎨\n",
    ],
)
def test_user_text_is_kept_byte_for_byte(user):
    text = update_sections(user, [SKILL, VIEWER])
    assert text.startswith(user)
    assert SKILL_BLOCK in text and VIEWER_BLOCK in text
    assert text == update_sections(text, [SKILL, VIEWER])


def test_second_run_is_byte_identical():
    once = update_sections("# Notes\n", [SKILL, VIEWER])
    twice = update_sections(once, [SKILL, VIEWER])
    assert twice == once


def test_each_section_is_updated_alone():
    original = update_sections("# Notes\n", [SKILL, VIEWER])
    new_viewer = ClaudeMdSection("viewer-api", "## Viewer API\n\nNow with actions.")
    changed = update_sections(original, [new_viewer])
    assert read_section(changed, "viewer-api") == "## Viewer API\n\nNow with actions."
    assert read_section(changed, "") == read_section(original, "")
    assert changed == original.replace("No actions.", "Now with actions.")

    new_skill = ClaudeMdSection("", "## Pneuma Demo Mode\n\nRead the skill, then the notes.")
    changed = update_sections(original, [new_skill])
    assert read_section(changed, "viewer-api") == read_section(original, "viewer-api")
    assert changed == original.replace("Read the skill first.", "Read the skill, then the notes.")


def test_text_before_between_and_after_markers_is_preserved():
    before = "# House rules\n\nNever delete the archive folder.\n\n"
    between = "\n\n## My own section between Pneuma's\n\nKeep it.\n\n"
    after = "\n\n## Notes after\n\n- one\n- two\n"
    original = (
        before
        + "<!-- pneuma:start -->\nold skill\n<!-- pneuma:end -->"
        + between
        + "<!-- pneuma:viewer-api:start -->\nold viewer\n<!-- pneuma:viewer-api:end -->"
        + after
    )
    text = update_sections(original, [SKILL, VIEWER])
    assert text == before + SKILL_BLOCK + between + VIEWER_BLOCK + after


def test_section_order_in_the_file_is_the_users():
    original = f"{VIEWER_BLOCK}\n\nmiddle\n\n{SKILL_BLOCK}\n"
    new_skill = ClaudeMdSection("", "changed")
    text = update_sections(original, [new_skill, VIEWER])
    assert text.index("viewer-api:start") < text.index("middle") < text.index("changed")


def test_body_blank_lines_at_the_ends_are_normalised():
    padded = ClaudeMdSection("", "\n\n## Pneuma Demo Mode\n\nRead the skill first.\n\n")
    assert update_sections("", [padded]) == SKILL_BLOCK + "\n"


def test_a_new_section_is_appended_after_existing_ones():
    original = f"# Notes\n\n{SKILL_BLOCK}\n\nMine.\n"
    text = update_sections(original, [SKILL, VIEWER])
    assert text == original + f"\n{VIEWER_BLOCK}\n"


# --- malformed markers ---

MALFORMED = {
    "start without end": (
        "# Notes\n\n<!-- pneuma:start -->\nbody\n",
        ["'<!-- pneuma:start -->' (line 3) has no end marker"],
    ),
    "end without start": (
        "# Notes\nbody\n<!-- pneuma:end -->\n",
        ["'<!-- pneuma:end -->' (line 3) ends a section that was never started"],
    ),
    "nested": (
        "<!-- pneuma:start -->\n<!-- pneuma:viewer-api:start -->\nx\n"
        "<!-- pneuma:viewer-api:end -->\n<!-- pneuma:end -->\n",
        ["'<!-- pneuma:viewer-api:start -->' (line 2) starts a section inside the unfinished "
         "section opened at line 1"],
    ),
    "duplicated pair": (
        "<!-- pneuma:start -->\na\n<!-- pneuma:end -->\n\ntext\n\n"
        "<!-- pneuma:start -->\nb\n<!-- pneuma:end -->\n",
        ["'<!-- pneuma:start -->' (line 7) duplicates a section already present"],
    ),
    "mismatched keys": (
        "intro\n<!-- pneuma:start -->\nx\n<!-- pneuma:viewer-api:end -->\n",
        ["'<!-- pneuma:viewer-api:end -->' (line 4) does not match the start marker "
         "'<!-- pneuma:start -->' at line 2"],
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_markers_raise_with_line_numbers(case):
    text, expected = MALFORMED[case]
    with pytest.raises(MarkerError) as info:
        update_sections(text, [SKILL, VIEWER], path="/ws/CLAUDE.md")
    for problem in expected:
        assert problem in info.value.problems, info.value.problems
    message = str(info.value)
    assert message.startswith("/ws/CLAUDE.md has malformed Pneuma markers: ")
    assert "Fix or remove the markers by hand" in message
    with pytest.raises(MarkerError):
        find_sections(text)


def test_a_body_containing_markers_is_refused():
    sneaky = ClaudeMdSection("extra", "text\n<!-- pneuma:end -->\n")
    with pytest.raises(MarkerError):
        update_sections("", [sneaky])


def test_markers_of_other_tools_are_ignored():
    original = "<!-- other:start -->\nx\n<!-- pneuma-notes:start -->\n<!-- PNEUMA:start -->\n"
    text = update_sections(original, [SKILL])
    assert text.startswith(original)


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_install_skill_leaves_a_malformed_file_unchanged(pm, workspace, case, snapshot):
    text, expected = MALFORMED[case]
    claude = workspace / "CLAUDE.md"
    claude.write_bytes(text.encode())
    with pytest.raises(MarkerError) as info:
        install_skill(get_mode("slide", pm), workspace, {}, pm=pm)
    assert expected[0] in str(info.value)
    assert str(claude.resolve()) in str(info.value)
    assert snapshot(workspace) == {"CLAUDE.md": text.encode()}


def test_cli_reports_malformed_markers_and_changes_nothing(pm, workspace, snapshot):
    text, expected = MALFORMED["start without end"]
    (workspace / "CLAUDE.md").write_text(text)
    (workspace / "manifest.json").write_text('{"slides": []}\n')  # content: no seeding
    before = snapshot(workspace)
    result = CliRunner().invoke(
        cli, ["skill", "install", "--mode", "slide", "-w", str(workspace), "--no-prompt"]
    )
    assert result.exit_code == 2
    assert "pneuma: error:" in result.stderr
    assert expected[0] in result.stderr
    after = snapshot(workspace)
    # The params are stored before the skill is installed; nothing else moves.
    after.pop(".pneuma/config.toml", None)
    assert after == before
