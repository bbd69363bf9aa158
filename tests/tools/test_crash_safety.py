"""A process writing through write_to_file, killed with SIGKILL at random
moments, leaves every file with an old or a new version (never torn),
readable snapshots and usable state."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from crash_writer import FILES, version, write_forever
from tool_helpers import error_code, policies_file

from pneuma.tools.runtime import ToolRuntime

KILLS = 30
COLD_KILLS = 3
WRITER = Path(__file__).resolve().parent / "crash_writer.py"


def check_file(path: Path, rel: str) -> None:
    text = path.read_text(encoding="utf-8")
    match = re.match(r"v(\d+)\n", text)
    assert match, f"{rel} is torn: {text[:40]!r}…{text[-40:]!r}"
    assert text == version(rel, int(match.group(1))), f"{rel} is torn"


def test_sigkill_never_tears_a_file(ws, call, notes_mode):
    rng = random.Random(1234)
    policies_file(ws).write_text(
        json.dumps({"policies": {"batchMaxLines": 10000, "snapshotRetention": 20}}))
    for rel in FILES:
        assert call("write_to_file", {"path": rel, "content": version(rel, 0),
                                      "dryRun": True})["applied"] is False
        assert call("write_to_file", {"path": rel, "content": version(rel, 0),
                                      "dryRun": False})["applied"] is True
    runtime = ToolRuntime(notes_mode, ws, server_url="", server_token="")
    start = 1
    for kill in range(KILLS):
        if kill < COLD_KILLS:  # a real interpreter started from scratch
            child = subprocess.Popen([sys.executable, str(WRITER), str(ws), str(start)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            first = child.stdout.readline()  # the first write has landed
            assert first.startswith("wrote"), (first, child.stderr.read())
            time.sleep(rng.uniform(0, 0.15))
            child.send_signal(signal.SIGKILL)
            out, _ = child.communicate()
            assert "ERROR" not in out, out
        else:  # forked: the same writer without paying for the interpreter's start-up
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child never returns
                os.close(read_end)
                try:
                    write_forever(runtime, start, lambda *_, fd=write_end: os.write(fd, b"w"))
                finally:
                    os._exit(3)
            os.close(write_end)
            assert os.read(read_end, 1) == b"w"
            time.sleep(rng.uniform(0, 0.15))
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            os.close(read_end)
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
        start += 1000
        for rel in FILES:
            check_file(ws / rel, rel)
    # Every listed snapshot is complete and holds a whole version.
    snapshots = call("list_snapshots", {"limit": 1000})["snapshots"]
    assert snapshots
    for snap in snapshots:
        restored = call("restore_snapshot", {"snapshotId": snap["id"]})
        assert "error" not in restored, restored
        if restored["content"] == "":  # the file did not exist before its first write
            continue
        assert re.match(r"v\d+\n", restored["content"]), snap
        assert restored["content"] == version(snap["path"],
                                              int(restored["content"][1:].split("\n")[0]))
    # The state survived too: a new write works, and no lock was left behind.
    rel = FILES[0]
    call("write_to_file", {"path": rel, "content": "after;\n", "dryRun": True})
    assert call("write_to_file", {"path": rel, "content": "after;\n",
                                  "dryRun": False})["applied"] is True
    assert error_code(call("read_file", {"path": rel})) is None
