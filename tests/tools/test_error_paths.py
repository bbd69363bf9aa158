"""A tool's error never tells where the workspace lives on disk.

OSError's text names the absolute path; the file tools answer with the
workspace-relative path and the OS's reason only, whatever goes wrong.
"""

from __future__ import annotations

import shutil


def _all_errors_relative(answers: list[dict], ws) -> None:
    for answer in answers:
        assert "error" in answer, answer
        text = str(answer)
        assert str(ws) not in text and str(ws.resolve()) not in text, answer
        assert answer["error"]["code"] != "E_INTERNAL", answer


def test_file_tool_errors_name_no_absolute_path(call, ws):
    (ws / "loop.md").symlink_to("loop.md")
    (ws / "plain.md").write_text("x\n")
    (ws / "folder").mkdir()
    answers = [
        call("read_file", {"path": "loop.md"}),
        call("read_file", {"path": "plain.md/child.md"}),
        call("read_file", {"path": "folder"}),
        call("read_file", {"path": "n" * 300 + ".md"}),
        call("read_file", {"path": "/".join(["d" * 200] * 25)}),
        call("read_file", {"path": "\ud800.md"}),
        call("list_files", {"path": "plain.md"}),
        call("search_files", {"path": "n" * 300, "query": "x"}),
    ]
    _all_errors_relative(answers, ws)


def test_a_snapshot_that_cannot_be_stored_names_no_absolute_path(call, ws):
    target = ws / "plain.md"
    target.write_text("before\n")
    snapshots = ws / ".pneuma" / "snapshots"
    shutil.rmtree(snapshots, ignore_errors=True)
    snapshots.parent.mkdir(exist_ok=True)
    snapshots.write_text("not a directory")  # storing the snapshot fails
    args = {"path": "plain.md", "content": "after\n", "mode": "overwrite"}
    call("write_to_file", {**args, "dryRun": True})
    answer = call("write_to_file", {**args, "dryRun": False})
    _all_errors_relative([answer], ws)
    assert answer["error"]["code"] == "E_IO"
