"""The seven generic file tools with the contract's semantics, examples and
§8 test vectors (write_to_file: dry run → diff, write → snapshotId,
concurrent change → E_CONFLICT)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tool_helpers import error_code, write
from pneuma.tools.files import content_hash

SNAP = re.compile(r"^snap_\d{8}T\d{6}_[0-9a-f]{8}$")


# --- §8 vectors and the contract's examples ---


def test_vector_dry_run_returns_a_diff(call, ws):
    before = (ws / "game/scene/start.txt").read_text()
    result = call("write_to_file", {"path": "game/scene/start.txt", "content": before + "x;\n",
                                    "mode": "overwrite", "dryRun": True})
    assert result["applied"] is False and result["diff"]["type"] == "line"
    assert result["diff"]["hunks"] and "snapshotId" not in result
    assert (ws / "game/scene/start.txt").read_text() == before  # nothing written


def test_vector_write_returns_a_snapshot_id(call, ws):
    result = write(call, "game/scene/beach_date.txt",
                   "changeBg: beach.jpg -next;\n雪乃: 海风真舒服呢;\n", idempotencyKey="0f4e")
    assert result["applied"] is True and SNAP.match(result["snapshotId"])
    assert result["bytesWritten"] == len("changeBg: beach.jpg -next;\n雪乃: 海风真舒服呢;\n".encode())
    assert (ws / "game/scene/beach_date.txt").read_text(encoding="utf-8").startswith("changeBg")


def test_vector_concurrent_change_is_a_conflict(call, ws):
    path = ws / "game/scene/start.txt"
    args = {"path": "game/scene/start.txt", "content": "mine;\n"}
    call("write_to_file", {**args, "dryRun": True})
    path.write_text(path.read_text() + "an edit made in the editor;\n")
    error = call("write_to_file", {**args, "dryRun": False})["error"]
    assert error["code"] == "E_CONFLICT" and error["recoverable"] is True
    assert error["details"]["actualHash"] == content_hash(path.read_text())
    assert error["details"]["expectedHash"] != error["details"]["actualHash"]
    assert "mine" not in path.read_text()
    # A fresh dry run against the new content makes the write go through.
    call("write_to_file", {**args, "dryRun": True})
    assert call("write_to_file", {**args, "dryRun": False})["applied"] is True


def test_example_list_files_with_globs(call):
    entries = call("list_files", {"path": "game/scene", "globs": ["**/*.txt"]})["entries"]
    assert "start.txt" in entries and all(e.endswith(".txt") for e in entries)
    assert not any("/" in e for e in entries)


def test_example_dry_run_then_write_workflow_and_restore(call, ws):
    """§2.5's workflow: list → restore → dry run → write."""
    path = ws / "game/scene/start.txt"
    original = path.read_text(encoding="utf-8")
    first = write(call, "game/scene/start.txt", "version two;\n")
    snapshots = call("list_snapshots", {"path": "game/scene", "limit": 10})["snapshots"]
    assert snapshots[0]["id"] == first["snapshotId"]
    restored = call("restore_snapshot", {"snapshotId": snapshots[0]["id"]})
    assert restored == {"path": "game/scene/start.txt", "content": original}
    assert path.read_text() == "version two;\n"  # restore alone writes nothing
    again = write(call, restored["path"], restored["content"])
    assert again["snapshotId"] != first["snapshotId"]
    assert path.read_text(encoding="utf-8") == original


# --- write_to_file ---


def test_write_requires_diff_and_content_must_match_the_dry_run(call, ws):
    args = {"path": "game/scene/a.txt"}
    error = call("write_to_file", {**args, "content": "x;\n", "dryRun": False})["error"]
    assert error["code"] == "E_POLICY_VIOLATION" and "dryRun" in error["hint"]
    call("write_to_file", {**args, "content": "x;\n", "dryRun": True})
    assert error_code(call("write_to_file", {**args, "content": "other;\n",
                                             "dryRun": False})) == "E_POLICY_VIOLATION"
    assert not (ws / "game/scene/a.txt").exists()
    (ws / ".pneuma/webgal-policies.json").write_text(
        json.dumps({"policies": {"writeRequiresDiff": False}}))
    assert call("write_to_file", {**args, "content": "other;\n", "dryRun": False})["applied"]


def test_new_file_diff_and_snapshot_of_nothing(call, ws):
    dry = call("write_to_file", {"path": "game/scene/n/new.txt", "content": "a;\nb;\n",
                                 "dryRun": True})
    assert dry["diff"]["hunks"] == [{"startOld": 1, "lenOld": 0, "startNew": 1, "lenNew": 2,
                                     "linesOld": [], "linesNew": ["a;", "b;"]}]
    result = call("write_to_file", {"path": "game/scene/n/new.txt", "content": "a;\nb;\n",
                                    "dryRun": False})
    assert (ws / "game/scene/n/new.txt").read_text() == "a;\nb;\n"
    snap = call("restore_snapshot", {"snapshotId": result["snapshotId"]})
    assert snap == {"path": "game/scene/n/new.txt", "content": ""}


def test_diff_shape_for_a_change_in_the_middle(call, ws):
    (ws / "s.txt").write_text("".join(f"L{i}\n" for i in range(1, 21)))
    new = "".join(f"L{i}\n" for i in range(1, 12)) + "B1\nB2\n" + "".join(
        f"L{i}\n" for i in range(13, 21))
    hunks = call("write_to_file", {"path": "s.txt", "content": new,
                                   "dryRun": True})["diff"]["hunks"]
    assert hunks == [{"startOld": 12, "lenOld": 1, "startNew": 12, "lenNew": 2,
                      "linesOld": ["L12"], "linesNew": ["B1", "B2"]}]


def test_append_mode(call, ws):
    path = ws / "game/scene/start.txt"
    before = path.read_text()
    dry = call("write_to_file", {"path": "game/scene/start.txt", "content": "end;\n",
                                 "mode": "append", "dryRun": True})
    assert dry["diff"]["hunks"][-1]["linesNew"] == ["end;"]
    assert call("write_to_file", {"path": "game/scene/start.txt", "content": "end;\n",
                                  "mode": "append", "dryRun": False})["applied"]
    assert path.read_text() == before + "end;\n"
    # An append dry-run against content that then changed is a conflict.
    call("write_to_file", {"path": "game/scene/start.txt", "content": "more;\n",
                           "mode": "append", "dryRun": True})
    path.write_text("rewritten;\n")
    assert error_code(call("write_to_file", {"path": "game/scene/start.txt",
                                             "content": "more;\n", "mode": "append",
                                             "dryRun": False})) == "E_CONFLICT"


def test_idempotency_key(call, ws):
    args = {"path": "game/scene/k.txt", "content": "k;\n", "idempotencyKey": "key-1"}
    call("write_to_file", {**args, "dryRun": True})
    first = call("write_to_file", {**args, "dryRun": False})
    snaps = len(call("list_snapshots")["snapshots"])
    # Same key, same file, same content: the same answer, no second write.
    (ws / "game/scene/k.txt").write_text("changed by hand;\n")
    assert call("write_to_file", {**args, "dryRun": False}) == first
    assert (ws / "game/scene/k.txt").read_text() == "changed by hand;\n"
    assert len(call("list_snapshots")["snapshots"]) == snaps
    listed = call("list_snapshots")["snapshots"][0]
    assert listed["idempotencyKey"] == "key-1" and listed["id"] == first["snapshotId"]
    # The same key for a different write is refused.
    error = call("write_to_file", {**args, "content": "other;\n", "dryRun": False})["error"]
    assert error["code"] == "E_CONFLICT" and error["details"]["idempotencyKey"] == "key-1"


def test_write_limits(call, ws):
    (ws / ".pneuma/webgal-policies.json").write_text(
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
    text = "a;\r\nb;\r\nno newline at the end"
    write(call, "crlf.txt", text)
    assert (ws / "crlf.txt").read_bytes() == text.encode()
    assert call("read_file", {"path": "crlf.txt"})["content"] == text


def test_write_through_a_symlink_inside_the_workspace(call, ws):
    (ws / "link.txt").symlink_to("game/config.txt")
    write(call, "link.txt", "Game_name:Linked;\n")
    assert (ws / "link.txt").is_symlink()
    assert (ws / "game/config.txt").read_text() == "Game_name:Linked;\n"


def test_writes_are_atomic_and_keep_permissions(call, ws):
    path = ws / "game/scene/start.txt"
    os.chmod(path, 0o640)
    write(call, "game/scene/start.txt", "new;\n")
    assert path.stat().st_mode & 0o777 == 0o640
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


# --- read_file / list_files / search_files ---


def test_read_file(call, ws):
    result = call("read_file", {"path": "./game//config.txt"})
    assert result["path"] == "game/config.txt" and result["encoding"] == "utf-8"
    assert result["bytes"] == (ws / "game/config.txt").stat().st_size
    assert result["content"] == (ws / "game/config.txt").read_text(encoding="utf-8")
    assert error_code(call("read_file", {"path": "game"})) == "E_NOT_FOUND"
    (ws / ".pneuma/webgal-policies.json").write_text(
        json.dumps({"policies": {"maxReadBytes": 8}}))
    assert call("read_file", {"path": "game/config.txt"})["error"]["details"]["limit"] == 8


def test_list_files(call, ws):
    (ws / "node_modules").mkdir()
    (ws / ".env.local").write_text("SECRET=1")
    top = call("list_files", {"path": "."})["entries"]
    assert "game/" in top
    assert not {"node_modules/", ".env.local", ".pneuma/"} & set(top)
    game = call("list_files", {"path": "game", "dirsOnly": True})["entries"]
    assert "scene/" in game and all(e.endswith("/") for e in game)
    deep = call("list_files", {"path": "game", "globs": ["scene/*.txt", "*.txt"]})["entries"]
    assert "config.txt" in deep and "scene/start.txt" in deep
    dirs = call("list_files", {"path": ".", "globs": ["**"], "dirsOnly": True})["entries"]
    assert "game/scene/" in dirs and not any(d.startswith(".pneuma") for d in dirs)
    assert error_code(call("list_files", {"path": "nope"})) == "E_NOT_FOUND"
    assert error_code(call("list_files", {"path": "game/config.txt"})) == "E_NOT_FOUND"
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
    (ws / "game" / "bin.png").write_bytes(b"\x89PNG\r\n\x1a\nchangeBg")
    result = call("search_files", {"path": "game", "regex": r"^changeBg:",
                                   "filePattern": "**/*.txt"})["matches"]
    assert result and all(m["path"].startswith("game/scene/") for m in result)
    first = result[0]
    line = (ws / first["path"]).read_text(encoding="utf-8").split("\n")[first["line"] - 1]
    assert first["preview"] == line.rstrip("\r")
    assert len(call("search_files", {"path": "", "regex": "e",
                                     "maxMatches": 3})["matches"]) == 3
    plain = call("search_files", {"path": "game", "regex": "changeBg", "filePattern": "*.txt"})
    assert plain["matches"]
    one = call("search_files", {"path": "game/config.txt", "regex": "Game_name"})["matches"]
    assert [m["path"] for m in one] == ["game/config.txt"]
    ci = call("search_files", {"path": "game", "regex": "/CHANGEBG/i"})["matches"]
    assert len(ci) >= len(result)
    bad = call("search_files", {"path": "game", "regex": "(unclosed"})["error"]
    assert bad["code"] == "E_BAD_ARGS" and bad["details"]["field"] == "regex"
    assert error_code(call("search_files", {"path": "nope", "regex": "x"})) == "E_NOT_FOUND"
    assert error_code(call("search_files", {"path": "../", "regex": "x"})) == "E_DENY_PATH"


# --- replace_in_file ---


@pytest.fixture
def script(ws) -> Path:
    path = ws / "game/scene/r.txt"
    path.write_text("hello;\nHello world;\nhello again;\n", encoding="utf-8")
    return path


def test_replace_plain_string_everywhere(call, script):
    assert call("replace_in_file", {"path": "game/scene/r.txt", "find": "hello",
                                    "replace": "$1 bye"}) == {"count": 2}
    assert script.read_text() == "$1 bye;\nHello world;\n$1 bye again;\n"


def test_replace_regex_forms(call, script):
    assert call("replace_in_file", {"path": "game/scene/r.txt", "find": "(?m)^hello;$",
                                    "replace": "hi;"}) == {"count": 1}
    assert call("replace_in_file", {"path": "game/scene/r.txt", "find": "(\\w+) (world)",
                                    "replace": "$2 $1 $$ $&", "flags": "g"}) == {"count": 1}
    assert "world Hello $ Hello world;" in script.read_text()
    # Flags without 'g' replace the first match only, as in JavaScript.
    assert call("replace_in_file", {"path": "game/scene/r.txt", "find": "HI|HELLO",
                                    "replace": "x", "flags": "i"}) == {"count": 1}
    assert call("replace_in_file", {"path": "game/scene/r.txt",
                                    "find": "/(?<word>again)/g",
                                    "replace": "<$<word>>"}) == {"count": 1}
    assert script.read_text().endswith("hello <again>;\n")


def test_replace_errors_and_snapshots(call, script, ws):
    bad = call("replace_in_file", {"path": "game/scene/r.txt", "find": "(", "replace": "",
                                   "flags": "g"})["error"]
    assert bad["code"] == "E_BAD_ARGS" and bad["details"]["field"] == "find"
    assert call("replace_in_file", {"path": "game/scene/r.txt", "find": "x", "replace": "",
                                    "flags": "q"})["error"]["details"]["field"] == "flags"
    assert error_code(call("replace_in_file", {"path": "game/scene/r.txt", "find": "",
                                               "replace": "x"})) == "E_BAD_ARGS"
    assert error_code(call("replace_in_file", {"path": "game/scene/none.txt", "find": "a",
                                               "replace": "b"})) == "E_NOT_FOUND"
    assert error_code(call("replace_in_file", {"path": "../r.txt", "find": "a",
                                               "replace": "b"})) == "E_DENY_PATH"
    before = script.read_text()
    assert call("replace_in_file", {"path": "game/scene/r.txt", "find": "absent",
                                    "replace": "b"}) == {"count": 0}
    assert call("list_snapshots", {"path": "game/scene/r.txt"})["snapshots"] == []
    call("replace_in_file", {"path": "game/scene/r.txt", "find": "world", "replace": "all"})
    snap = call("list_snapshots", {"path": "game/scene/r.txt"})["snapshots"][0]
    assert call("restore_snapshot", {"snapshotId": snap["id"]})["content"] == before


# --- snapshots ---


def test_list_snapshots_order_filter_limit_and_retention(call, ws):
    (ws / ".pneuma/webgal-policies.json").write_text(
        json.dumps({"policies": {"snapshotRetention": 3}}))
    ids = [write(call, "game/scene/v.txt", f"v{i};\n")["snapshotId"] for i in range(5)]
    write(call, "game/other.txt", "o;\n")
    mine = call("list_snapshots", {"path": "game/scene/v"})["snapshots"]
    assert [s["id"] for s in mine] == ids[:1:-1]  # newest 3, newest first
    assert all(SNAP.match(s["id"]) and re.fullmatch("[0-9a-f]{8}", s["contentHash"])
               for s in mine)
    assert [s["timestamp"] for s in mine] == sorted((s["timestamp"] for s in mine),
                                                    reverse=True)
    assert len(call("list_snapshots", {"limit": 2})["snapshots"]) == 2
    assert call("list_snapshots", {"path": "GAME"})["snapshots"] == []  # case-sensitive
    assert len(call("list_snapshots", {"path": "game/"})["snapshots"]) == 4
    assert call("list_snapshots", {"limit": 2.7})["snapshots"][0]["path"] == "game/other.txt"
    # Pruned snapshots are really gone.
    assert error_code(call("restore_snapshot", {"snapshotId": ids[0]})) == "E_NOT_FOUND"
    assert call("restore_snapshot", {"snapshotId": ids[4]})["content"] == "v3;\n"


def test_list_snapshots_skips_broken_ones(call, ws):
    good = write(call, "a.txt", "a\n")["snapshotId"]
    store = ws / ".pneuma/snapshots/webgal"
    broken = write(call, "b.txt", "b\n")["snapshotId"]
    (store / f"{broken}.meta.json").write_text("{")
    orphan = write(call, "c.txt", "c\n")["snapshotId"]
    (store / f"{orphan}.txt").unlink()
    assert [s["id"] for s in call("list_snapshots")["snapshots"]] == [good]
    assert error_code(call("restore_snapshot", {"snapshotId": orphan})) == "E_NOT_FOUND"


def test_list_snapshots_when_there_are_none(call):
    assert call("list_snapshots") == {"snapshots": []}


def test_snapshot_files_on_disk(call, ws):
    snap = write(call, "game/scene/start.txt", "x;\n")["snapshotId"]
    store = ws / ".pneuma/snapshots/webgal"
    meta = json.loads((store / f"{snap}.meta.json").read_text())
    original_text = (store / f"{snap}.txt").read_text(encoding="utf-8")
    assert meta["id"] == snap and meta["path"] == "game/scene/start.txt"
    assert meta["contentHash"] == content_hash(original_text)
    assert meta["size"] == len(original_text.encode()) and meta["reason"] == "write_to_file"
    assert meta["createdAt"].endswith("Z") and isinstance(meta["timestamp"], int)
