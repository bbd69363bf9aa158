"""The host's seven file tools as docs/tools.md describes them, on the
generic notes mode: write_to_file's dry run → diff, write → snapshotId,
concurrent change → E_CONFLICT; the dry run → write → restore workflow; then
each tool's own rules."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from tool_helpers import error_code, policies_file, write

from pneuma.core.files import content_hash

SNAP = re.compile(r"^snap_\d{8}T\d{6}_[0-9a-f]{8}$")


# --- dry run, write, conflict; the workflow ---


def test_dry_run_returns_a_diff(call, ws):
    before = (ws / "notes/days/monday.md").read_text()
    result = call("write_to_file", {"path": "notes/days/monday.md", "content": before + "x\n",
                                    "mode": "overwrite", "dryRun": True})
    assert result["applied"] is False and result["diff"]["type"] == "line"
    assert result["diff"]["hunks"] and "snapshotId" not in result
    assert (ws / "notes/days/monday.md").read_text() == before  # nothing written


def test_write_returns_a_snapshot_id(call, ws):
    result = write(call, "notes/days/beach.md",
                   "# 海边\nMood: 海风真舒服呢。\n", idempotencyKey="0f4e")
    assert result["applied"] is True and SNAP.match(result["snapshotId"])
    assert result["bytesWritten"] == len("# 海边\nMood: 海风真舒服呢。\n".encode())
    assert (ws / "notes/days/beach.md").read_text(encoding="utf-8").startswith("# 海边")


def test_concurrent_change_is_a_conflict(call, ws):
    path = ws / "notes/days/monday.md"
    args = {"path": "notes/days/monday.md", "content": "mine\n"}
    call("write_to_file", {**args, "dryRun": True})
    path.write_text(path.read_text() + "an edit made in the editor\n")
    error = call("write_to_file", {**args, "dryRun": False})["error"]
    assert error["code"] == "E_CONFLICT" and error["recoverable"] is True
    assert error["details"]["actualHash"] == content_hash(path.read_text())
    assert error["details"]["expectedHash"] != error["details"]["actualHash"]
    assert "mine" not in path.read_text()
    # A fresh dry run against the new content makes the write go through.
    call("write_to_file", {**args, "dryRun": True})
    assert call("write_to_file", {**args, "dryRun": False})["applied"] is True


def test_list_files_with_globs(call, ws):
    (ws / "notes/days/draft.txt").write_text("not a note yet\n")
    entries = call("list_files", {"path": "notes/days", "globs": ["**/*.md"]})["entries"]
    assert "monday.md" in entries and all(e.endswith(".md") for e in entries)
    assert not any("/" in e for e in entries)


def test_dry_run_then_write_workflow_and_restore(call, ws):
    """Rolling a file back: write → list → restore → dry run → write."""
    path = ws / "notes/days/monday.md"
    original = path.read_text(encoding="utf-8")
    first = write(call, "notes/days/monday.md", "version two\n")
    snapshots = call("list_snapshots", {"path": "notes/days", "limit": 10})["snapshots"]
    assert snapshots[0]["id"] == first["snapshotId"]
    restored = call("restore_snapshot", {"snapshotId": snapshots[0]["id"]})
    assert restored == {"path": "notes/days/monday.md", "content": original}
    assert path.read_text() == "version two\n"  # restore alone writes nothing
    again = write(call, restored["path"], restored["content"])
    assert again["snapshotId"] != first["snapshotId"]
    assert path.read_text(encoding="utf-8") == original


# --- write_to_file ---


def test_write_requires_diff_and_content_must_match_the_dry_run(call, ws):
    args = {"path": "notes/days/a.md"}
    error = call("write_to_file", {**args, "content": "x\n", "dryRun": False})["error"]
    assert error["code"] == "E_POLICY_VIOLATION" and "dryRun" in error["hint"]
    call("write_to_file", {**args, "content": "x\n", "dryRun": True})
    assert error_code(call("write_to_file", {**args, "content": "other\n",
                                             "dryRun": False})) == "E_POLICY_VIOLATION"
    assert not (ws / "notes/days/a.md").exists()
    policies_file(ws).write_text(json.dumps({"policies": {"writeRequiresDiff": False}}))
    assert call("write_to_file", {**args, "content": "other\n", "dryRun": False})["applied"]


def test_new_file_diff_and_snapshot_of_nothing(call, ws):
    dry = call("write_to_file", {"path": "notes/days/n/new.md", "content": "a\nb\n",
                                 "dryRun": True})
    assert dry["diff"]["hunks"] == [{"startOld": 1, "lenOld": 0, "startNew": 1, "lenNew": 2,
                                     "linesOld": [], "linesNew": ["a", "b"]}]
    result = call("write_to_file", {"path": "notes/days/n/new.md", "content": "a\nb\n",
                                    "dryRun": False})
    assert (ws / "notes/days/n/new.md").read_text() == "a\nb\n"
    snap = call("restore_snapshot", {"snapshotId": result["snapshotId"]})
    assert snap == {"path": "notes/days/n/new.md", "content": ""}


def test_diff_shape_for_a_change_in_the_middle(call, ws):
    (ws / "s.txt").write_text("".join(f"L{i}\n" for i in range(1, 21)))
    new = "".join(f"L{i}\n" for i in range(1, 12)) + "B1\nB2\n" + "".join(
        f"L{i}\n" for i in range(13, 21))
    hunks = call("write_to_file", {"path": "s.txt", "content": new,
                                   "dryRun": True})["diff"]["hunks"]
    assert hunks == [{"startOld": 12, "lenOld": 1, "startNew": 12, "lenNew": 2,
                      "linesOld": ["L12"], "linesNew": ["B1", "B2"]}]


def test_append_mode(call, ws):
    path = ws / "notes/days/monday.md"
    before = path.read_text()
    dry = call("write_to_file", {"path": "notes/days/monday.md", "content": "end\n",
                                 "mode": "append", "dryRun": True})
    assert dry["diff"]["hunks"][-1]["linesNew"] == ["end"]
    assert call("write_to_file", {"path": "notes/days/monday.md", "content": "end\n",
                                  "mode": "append", "dryRun": False})["applied"]
    assert path.read_text() == before + "end\n"
    # An append dry-run against content that then changed is a conflict.
    call("write_to_file", {"path": "notes/days/monday.md", "content": "more\n",
                           "mode": "append", "dryRun": True})
    path.write_text("rewritten\n")
    assert error_code(call("write_to_file", {"path": "notes/days/monday.md",
                                             "content": "more\n", "mode": "append",
                                             "dryRun": False})) == "E_CONFLICT"


def test_idempotency_key(call, ws):
    args = {"path": "notes/days/k.md", "content": "k\n", "idempotencyKey": "key-1"}
    call("write_to_file", {**args, "dryRun": True})
    first = call("write_to_file", {**args, "dryRun": False})
    snaps = len(call("list_snapshots")["snapshots"])
    # Same key, same file, same content: the same answer, no second write.
    (ws / "notes/days/k.md").write_text("changed by hand\n")
    assert call("write_to_file", {**args, "dryRun": False}) == first
    assert (ws / "notes/days/k.md").read_text() == "changed by hand\n"
    assert len(call("list_snapshots")["snapshots"]) == snaps
    listed = call("list_snapshots")["snapshots"][0]
    assert listed["idempotencyKey"] == "key-1" and listed["id"] == first["snapshotId"]
    # The same key for a different write is refused.
    error = call("write_to_file", {**args, "content": "other\n", "dryRun": False})["error"]
    assert error["code"] == "E_CONFLICT" and error["details"]["idempotencyKey"] == "key-1"


def test_write_limits(call, ws):
    policies_file(ws).write_text(
        json.dumps({"policies": {"maxWriteBytes": 10, "batchMaxLines": 3}}))
    assert error_code(call("write_to_file", {"path": "b.txt", "content": "x" * 11,
                                             "dryRun": True})) == "E_TOO_LARGE"
    error = call("write_to_file", {"path": "b.txt", "content": "1\n2\n3\n4\n",
                                   "dryRun": True})["error"]
    assert error["code"] == "E_TOO_LARGE" and error["details"]["limit"] == 3


def test_lone_surrogates_are_an_encoding_error(call):
    assert error_code(call("write_to_file", {"path": "s.txt", "content": "a\ud800b",
                                             "dryRun": True})) == "E_ENCODING"


def test_crlf_and_missing_final_newline_are_kept(call, ws):
    text = "a\r\nb\r\nno newline at the end"
    write(call, "crlf.txt", text)
    assert (ws / "crlf.txt").read_bytes() == text.encode()
    assert call("read_file", {"path": "crlf.txt"})["content"] == text


def test_write_through_a_symlink_inside_the_workspace(call, ws):
    (ws / "link.txt").symlink_to("notes/settings.txt")
    write(call, "link.txt", "title: Linked\n")
    assert (ws / "link.txt").is_symlink()
    assert (ws / "notes/settings.txt").read_text() == "title: Linked\n"


def test_writes_are_atomic_and_keep_permissions(call, ws):
    path = ws / "notes/days/monday.md"
    os.chmod(path, 0o640)
    write(call, "notes/days/monday.md", "new\n")
    assert path.stat().st_mode & 0o777 == 0o640
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


# --- read_file / list_files / search_files ---


def test_read_file(call, ws):
    result = call("read_file", {"path": "./notes//settings.txt"})
    assert result["path"] == "notes/settings.txt" and result["encoding"] == "utf-8"
    assert result["bytes"] == (ws / "notes/settings.txt").stat().st_size
    assert result["content"] == (ws / "notes/settings.txt").read_text(encoding="utf-8")
    assert error_code(call("read_file", {"path": "notes"})) == "E_NOT_FOUND"
    policies_file(ws).write_text(json.dumps({"policies": {"maxReadBytes": 8}}))
    assert call("read_file", {"path": "notes/settings.txt"})["error"]["details"]["limit"] == 8


def test_list_files(call, ws):
    (ws / "node_modules").mkdir()
    (ws / ".env.local").write_text("SECRET=1")
    top = call("list_files", {"path": "."})["entries"]
    assert "notes/" in top and "README.md" in top
    assert not {"node_modules/", ".env.local", ".pneuma/"} & set(top)
    notes = call("list_files", {"path": "notes", "dirsOnly": True})["entries"]
    assert "days/" in notes and all(e.endswith("/") for e in notes)
    deep = call("list_files", {"path": "notes", "globs": ["days/*.md", "*.txt"]})["entries"]
    assert "settings.txt" in deep and "days/monday.md" in deep
    dirs = call("list_files", {"path": ".", "globs": ["**"], "dirsOnly": True})["entries"]
    assert "notes/days/" in dirs and not any(d.startswith(".pneuma") for d in dirs)
    assert error_code(call("list_files", {"path": "nope"})) == "E_NOT_FOUND"
    assert error_code(call("list_files", {"path": "notes/settings.txt"})) == "E_NOT_FOUND"
    assert error_code(call("list_files", {"path": "/etc"})) == "E_DENY_PATH"


def test_list_files_hides_symlinks_out_of_the_workspace(call, ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("x")
    (ws / "escape").symlink_to(outside)
    assert "escape/" not in call("list_files", {"path": "."})["entries"]
    assert error_code(call("list_files", {"path": "escape"})) == "E_DENY_PATH"
    assert not any("x.txt" in e for e in call("list_files", {"path": ".",
                                                              "globs": ["**"]})["entries"])


def test_search_files(call, ws):
    (ws / "notes" / "bin.png").write_bytes(b"\x89PNG\r\n\x1a\nMood:")
    result = call("search_files", {"path": "notes", "regex": r"^Mood:",
                                   "filePattern": "**/*.md"})["matches"]
    assert result and all(m["path"].startswith("notes/days/") for m in result)
    first = result[0]
    line = (ws / first["path"]).read_text(encoding="utf-8").split("\n")[first["line"] - 1]
    assert first["preview"] == line.rstrip("\r")
    assert len(call("search_files", {"path": "", "regex": "e",
                                     "maxMatches": 3})["matches"]) == 3
    plain = call("search_files", {"path": "notes", "regex": "Mood", "filePattern": "*.md"})
    assert plain["matches"]
    one = call("search_files", {"path": "notes/settings.txt", "regex": "title"})["matches"]
    assert [m["path"] for m in one] == ["notes/settings.txt"]
    ci = call("search_files", {"path": "notes", "regex": "/MOOD/i"})["matches"]
    assert len(ci) >= len(result)
    bad = call("search_files", {"path": "notes", "regex": "(unclosed"})["error"]
    assert bad["code"] == "E_BAD_ARGS" and bad["details"]["field"] == "regex"
    assert error_code(call("search_files", {"path": "nope", "regex": "x"})) == "E_NOT_FOUND"
    assert error_code(call("search_files", {"path": "../", "regex": "x"})) == "E_DENY_PATH"


# --- replace_in_file ---


@pytest.fixture
def script(ws) -> Path:
    path = ws / "notes/days/r.md"
    path.write_text("hello;\nHello world;\nhello again;\n", encoding="utf-8")
    return path


def test_replace_plain_string_everywhere(call, script):
    assert call("replace_in_file", {"path": "notes/days/r.md", "find": "hello",
                                    "replace": "$1 bye"}) == {"count": 2}
    assert script.read_text() == "$1 bye;\nHello world;\n$1 bye again;\n"


def test_replace_regex_forms(call, script):
    assert call("replace_in_file", {"path": "notes/days/r.md", "find": "(?m)^hello;$",
                                    "replace": "hi;"}) == {"count": 1}
    assert call("replace_in_file", {"path": "notes/days/r.md", "find": "(\\w+) (world)",
                                    "replace": "$2 $1 $$ $&", "flags": "g"}) == {"count": 1}
    assert "world Hello $ Hello world;" in script.read_text()
    # Flags without 'g' replace the first match only, as in JavaScript.
    assert call("replace_in_file", {"path": "notes/days/r.md", "find": "HI|HELLO",
                                    "replace": "x", "flags": "i"}) == {"count": 1}
    assert call("replace_in_file", {"path": "notes/days/r.md",
                                    "find": "/(?<word>again)/g",
                                    "replace": "<$<word>>"}) == {"count": 1}
    assert script.read_text().endswith("hello <again>;\n")


def test_replace_errors_and_snapshots(call, script, ws):
    bad = call("replace_in_file", {"path": "notes/days/r.md", "find": "(", "replace": "",
                                   "flags": "g"})["error"]
    assert bad["code"] == "E_BAD_ARGS" and bad["details"]["field"] == "find"
    assert call("replace_in_file", {"path": "notes/days/r.md", "find": "x", "replace": "",
                                    "flags": "q"})["error"]["details"]["field"] == "flags"
    assert error_code(call("replace_in_file", {"path": "notes/days/r.md", "find": "",
                                               "replace": "x"})) == "E_BAD_ARGS"
    assert error_code(call("replace_in_file", {"path": "notes/days/none.md", "find": "a",
                                               "replace": "b"})) == "E_NOT_FOUND"
    assert error_code(call("replace_in_file", {"path": "../r.md", "find": "a",
                                               "replace": "b"})) == "E_DENY_PATH"
    before = script.read_text()
    assert call("replace_in_file", {"path": "notes/days/r.md", "find": "absent",
                                    "replace": "b"}) == {"count": 0}
    assert call("list_snapshots", {"path": "notes/days/r.md"})["snapshots"] == []
    call("replace_in_file", {"path": "notes/days/r.md", "find": "world", "replace": "all"})
    snap = call("list_snapshots", {"path": "notes/days/r.md"})["snapshots"][0]
    assert call("restore_snapshot", {"snapshotId": snap["id"]})["content"] == before


# --- snapshots ---


def test_list_snapshots_order_filter_limit_and_retention(call, ws):
    policies_file(ws).write_text(json.dumps({"policies": {"snapshotRetention": 3}}))
    ids = [write(call, "notes/days/v.md", f"v{i}\n")["snapshotId"] for i in range(5)]
    write(call, "notes/other.md", "o\n")
    mine = call("list_snapshots", {"path": "notes/days/v"})["snapshots"]
    assert [s["id"] for s in mine] == ids[:1:-1]  # newest 3, newest first
    assert all(SNAP.match(s["id"]) and re.fullmatch("[0-9a-f]{8}", s["contentHash"])
               for s in mine)
    assert [s["timestamp"] for s in mine] == sorted((s["timestamp"] for s in mine),
                                                    reverse=True)
    assert len(call("list_snapshots", {"limit": 2})["snapshots"]) == 2
    assert call("list_snapshots", {"path": "NOTES"})["snapshots"] == []  # case-sensitive
    assert len(call("list_snapshots", {"path": "notes/"})["snapshots"]) == 4
    assert call("list_snapshots", {"limit": 2.7})["snapshots"][0]["path"] == "notes/other.md"
    # Pruned snapshots are really gone.
    assert error_code(call("restore_snapshot", {"snapshotId": ids[0]})) == "E_NOT_FOUND"
    assert call("restore_snapshot", {"snapshotId": ids[4]})["content"] == "v3\n"


def test_list_snapshots_skips_broken_ones(call, ws):
    good = write(call, "a.txt", "a\n")["snapshotId"]
    store = ws / ".pneuma/snapshots/notes"
    broken = write(call, "b.txt", "b\n")["snapshotId"]
    (store / f"{broken}.meta.json").write_text("{")
    orphan = write(call, "c.txt", "c\n")["snapshotId"]
    (store / f"{orphan}.txt").unlink()
    assert [s["id"] for s in call("list_snapshots")["snapshots"]] == [good]
    assert error_code(call("restore_snapshot", {"snapshotId": orphan})) == "E_NOT_FOUND"


def test_list_snapshots_when_there_are_none(call):
    assert call("list_snapshots") == {"snapshots": []}


def test_snapshot_files_on_disk(call, ws):
    snap = write(call, "notes/days/monday.md", "x\n")["snapshotId"]
    store = ws / ".pneuma/snapshots/notes"
    meta = json.loads((store / f"{snap}.meta.json").read_text())
    original_text = (store / f"{snap}.txt").read_text(encoding="utf-8")
    assert meta["id"] == snap and meta["path"] == "notes/days/monday.md"
    assert meta["contentHash"] == content_hash(original_text)
    assert meta["size"] == len(original_text.encode()) and meta["reason"] == "write_to_file"
    assert meta["createdAt"].endswith("Z") and isinstance(meta["timestamp"], int)
