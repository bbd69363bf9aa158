"""Every file name the sandbox accepts (up to NAME_MAX, 255 bytes) can be
written, restored from a checkpoint and exported.

The atomic write goes through a temp file beside the target; when the temp
name was the file's own name plus 14 bytes, names of 242 to 255 bytes were
accepted but could not be written (``POST /api/files`` answered 500 E_IO).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, restore
from pneuma.core.file_filter import FileFilter
from pneuma.core.files import TEMP_NAME, temp_name
from pneuma.core.sandbox import MAX_NAME_BYTES
from pneuma.testing import make_workspace
from pneuma.tools.runtime import ToolRuntime

PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))


def long_name(size: int, suffix: str = ".md") -> str:
    """A name of exactly ``size`` UTF-8 bytes, with multi-byte letters in it."""
    head = "é" * 20  # 40 bytes
    return head + "n" * (size - len(head.encode()) - len(suffix)) + suffix


SIZES = (241, 242, 250, MAX_NAME_BYTES)


def test_the_temp_name_fits_whatever_the_name() -> None:
    for size in SIZES:
        tmp = temp_name(long_name(size))
        assert len(tmp.encode()) <= MAX_NAME_BYTES
        assert TEMP_NAME.fullmatch(tmp)
        # Never shown in the page as a file of its own, in any folder.
        assert not FileFilter(["**/*"], [])(f"deep/er/{tmp}")


@pytest.mark.parametrize("size", SIZES)
async def test_a_long_name_is_written_and_overwritten_over_http(server, ws: Path,
                                                               size: int) -> None:
    name = long_name(size)
    assert len(name.encode()) == size
    for text in ("first\n", "second\n"):  # a new file, then an existing one
        response = await server.post("/api/files", json={"path": f"notes/{name}", "content": text})
        assert response.status == 200, await response.text()
        assert (ws / "notes" / name).read_text() == text
    assert not [p for p in (ws / "notes").iterdir() if TEMP_NAME.fullmatch(p.name)]


async def test_a_name_over_the_limit_is_a_clear_refusal(server) -> None:
    response = await server.post("/api/files", json={"path": "n" * (MAX_NAME_BYTES + 1),
                                                     "content": "x"})
    assert response.status == 400
    assert (await response.json())["error"]["code"] == "E_BAD_ARGS"


def test_a_long_name_is_written_by_the_tools(notes_mode, ws: Path) -> None:
    name = long_name(MAX_NAME_BYTES)
    runtime = ToolRuntime(notes_mode, ws, server_url="", server_token="",
                          policy_overrides={"writeRequiresDiff": False})
    answer = runtime.call("write_to_file", {"path": name, "content": "by the agent\n",
                                    "mode": "overwrite", "dryRun": False})
    assert "error" not in answer, answer
    assert (ws / name).read_text() == "by the agent\n"


def test_a_long_name_is_restored_and_its_restore_undone(tmp_path: Path) -> None:
    edited, added = long_name(MAX_NAME_BYTES), long_name(MAX_NAME_BYTES - 1, ".txt")
    (tmp_path / edited).write_text("before the turn")
    store = Checkpoints(tmp_path)
    store.record("the turn")
    (tmp_path / edited).write_text("after the turn")
    (tmp_path / added).write_text("added by the turn")
    store.turn_ended()

    result = restore(store, "1")
    assert sorted(result.restored) == sorted([edited, added])
    assert (tmp_path / edited).read_text() == "before the turn"
    assert not (tmp_path / added).exists()

    assert result.undo is not None
    restore(store, result.undo)
    assert (tmp_path / edited).read_text() == "after the turn"
    assert (tmp_path / added).read_text() == "added by the turn"


def test_a_long_name_is_exported_in_the_site_zip(tmp_path: Path) -> None:
    site = make_workspace("webcraft", tmp_path / "site")
    name = long_name(MAX_NAME_BYTES, ".css")
    (site / name).write_text("body { color: teal }\n")
    out = tmp_path / "site.zip"
    result = subprocess.run([PNEUMA, "export", "--mode", "webcraft", "-w", str(site),
                             "--format", "zip", "-o", str(out)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    with zipfile.ZipFile(io.BytesIO(out.read_bytes())) as archive:
        assert archive.read(name) == b"body { color: teal }\n"
