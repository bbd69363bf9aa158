"""Property tests: no generated path escapes the sandbox; diffs apply back;
write → snapshot → restore round-trips any text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pneuma.core.errors import ToolError
from pneuma.core.sandbox import Sandbox
from pneuma.tools.diff import apply_line_diff, line_diff
from pneuma.tools.runtime import ToolRuntime

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

tricky_segments = st.sampled_from([
    "..", ".", "", "...", "..\u2024", "\uff0e\uff0e", "\u2025", ".\u200b.", "%2e%2e", "..%2f",
    "\u2215", "\uff0f", "\\..", "..\\..", "C:", "c:\\", "\x00", "a\x00b", "\n", "~", "$HOME",
    "out", "link_out", "link_in", "notes", ".git", "node_modules", ".env", ".pneuma", "ok.txt",
    "\u0000..", "\u202e..", "\u00e9", "e\u0301", "days", "/", "//",
])
paths = st.one_of(
    st.lists(st.one_of(tricky_segments, st.text(min_size=0, max_size=6)),
             min_size=1, max_size=6).map("/".join),
    st.lists(tricky_segments, min_size=1, max_size=6).map("/".join).map(lambda p: "/" + p),
    st.text(max_size=30),
)


@pytest.fixture(scope="module")
def jail(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("jail")
    root = (base / "root").resolve()
    outside = (base / "outside").resolve()
    (root / "notes" / "days").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (root / "link_out").symlink_to(outside)
    (root / "notes" / "link_out").symlink_to("../../outside")
    (root / "link_in").symlink_to("notes")
    (root / "notes" / "loop").symlink_to("loop")
    return root, outside


def _inside(root: Path, path: Path) -> bool:
    real = Path(os.path.realpath(path))
    return real == root or root in real.parents


@SETTINGS
@given(rel=paths)
def test_no_path_escapes_the_sandbox(jail, rel):
    root, outside = jail
    sandbox = Sandbox(root)
    try:
        resolved = sandbox.resolve(rel, allow_root=True)
    except ToolError as exc:
        assert exc.code in {"E_DENY_PATH", "E_BAD_ARGS"}
        return
    assert _inside(root, resolved), (rel, resolved)
    assert "\x00" not in str(resolved)
    parts = Path(os.path.realpath(resolved)).relative_to(root).parts
    assert not {".git", "node_modules", ".pneuma"} & set(parts)
    assert not any(p.startswith(".env") for p in parts)


@settings(max_examples=60, deadline=None)
@given(rel=paths)
def test_no_tool_reads_or_writes_outside(jail, notes_mode, rel):
    root, outside = jail
    rt = ToolRuntime(notes_mode, root, server_url="", server_token="",
                     policy_overrides={"writeRequiresDiff": False})
    read = rt.call("read_file", {"path": rel})
    assert read.get("content") != "secret"
    listed = rt.call("list_files", {"path": rel or "."})
    assert "secret.txt" not in listed.get("entries", [])
    wrote = rt.call("write_to_file", {"path": rel or "x", "content": "pwned", "dryRun": False})
    if "error" not in wrote:
        target = rt.context().sandbox.resolve(rel or "x")
        assert _inside(root, target)
        os.unlink(os.path.realpath(target))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret"


lines_text = st.lists(st.sampled_from(["a", "b", "c", "", "\r", "dé", "x y"]),
                      max_size=12).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(old=lines_text, new=lines_text)
def test_line_diff_applies_back(old, new):
    diff = line_diff(old, new)
    assert apply_line_diff(old, diff) == new
    for hunk in diff["hunks"]:
        assert hunk["startOld"] >= 1 and hunk["startNew"] >= 1
        assert hunk["lenOld"] == len(hunk["linesOld"]) and hunk["lenNew"] == len(hunk["linesNew"])


@settings(max_examples=100, deadline=None)
@given(old=lines_text, new=lines_text, prefix=st.lists(st.sampled_from(["p", "q"]), max_size=4))
def test_apply_finds_moved_hunks(old, new, prefix):
    """A diff still applies after unrelated lines were added at the top."""
    diff = line_diff(old, new)
    shifted = "\n".join(prefix + [old]) if prefix else old
    try:
        result = apply_line_diff(shifted, diff)
    except ToolError as exc:
        assert exc.code == "E_CONFLICT"
        return
    assert result.count("\n") == shifted.count("\n") + new.count("\n") - old.count("\n")


def test_apply_conflict_details():
    diff = line_diff("a\nb\nc", "a\nB\nc")
    with pytest.raises(ToolError) as info:
        apply_line_diff("x\ny\nz", diff, path="f.txt")
    assert info.value.code == "E_CONFLICT"
    assert info.value.details["expectedLines"] == ["b"] and info.value.details["hunk"] == 0


any_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=any_text, second=any_text)
def test_write_snapshot_restore_round_trips_any_text(call, ws, first, second):
    path = "notes/days/round.md"
    for text in (first, second):
        assert call("write_to_file", {"path": path, "content": text, "dryRun": True})[
            "applied"] is False
        result = call("write_to_file", {"path": path, "content": text, "dryRun": False})
        assert result["applied"] is True, result
        assert (ws / path).read_bytes() == text.encode("utf-8")
        assert call("read_file", {"path": path})["content"] == text
    # The second write's snapshot holds the first text, byte for byte.
    restored = call("restore_snapshot", {"snapshotId": result["snapshotId"]})
    assert restored == {"path": path, "content": first}
    call("write_to_file", {"path": path, "content": restored["content"], "dryRun": True})
    call("write_to_file", {"path": path, "content": restored["content"], "dryRun": False})
    assert (ws / path).read_bytes() == first.encode("utf-8")
