"""What `pneuma run` says in the terminal at start: a problem it will stop
for comes before any ready line (never a URL and then exit 2), a problem
the page would show is also a terminal warning, and a port other than the
one asked for is named."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
from pathlib import Path

from pneuma.startup.launch_stamp import launch_key, stamp_is_current, write_stamp
from tests.pneuma_process import no_server_left, start_run  # noqa: F401 (autouse fixture)


def _run(workspace: Path, mode: str = "slide", *extra: str) -> subprocess.Popen:
    return start_run(workspace, mode, *extra, root_sandbox=False)


def _start_and_stop(workspace: Path, mode: str = "slide", *extra: str) -> tuple[str, str]:
    proc = _run(workspace, mode, "--port", "0", *extra)
    line = proc.stdout.readline()
    assert line.startswith("[pneuma] ready "), proc.communicate()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    return line, err


def test_a_new_invalid_config_after_a_stamped_start_stops_before_the_ready_line(tmp_path):
    # The doc mode has no params: a start writes no config.toml.
    workspace = tmp_path / "doc"
    _start_and_stop(workspace, "doc")
    config = workspace / ".pneuma" / "config.toml"
    assert not config.exists()
    config.write_text("[params.doc\n")
    proc = _run(workspace, "doc", "--port", "0")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2, err
    assert "[pneuma] ready" not in out
    assert "config.toml" in err and "Traceback" not in err


def test_a_config_rewritten_with_its_old_stat_is_still_a_change(tmp_path):
    """Same size, same mtime, same inode (rewritten in place, times put
    back, as a copy that keeps times may leave it): the content differs."""
    workspace = tmp_path / "ws"
    config = workspace / ".pneuma" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[params.slide]\nslideWidth = 1280\n")
    key = launch_key(mode="slide", backend="none", params={}, skip_skill=False)
    write_stamp(workspace, key, [str(config)])
    assert stamp_is_current(workspace, key)
    before = config.stat()
    with open(config, "r+b") as file:
        file.write(b"[params.slide\n")
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = config.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size, before.st_mtime_ns, before.st_ino)
    assert not stamp_is_current(workspace, key)


def test_a_broken_deck_manifest_is_a_terminal_warning(tmp_path):
    workspace = tmp_path / "deck"
    _start_and_stop(workspace)
    (workspace / "manifest.json").write_text('{"slides": ["slides/slide-01.html",')
    # The deck's content is not part of the launch stamp (the agent edits
    # it all the time), so the warning may follow the ready line.
    proc = _run(workspace, "slide", "--port", "0")
    give_up = threading.Timer(20, proc.send_signal, [signal.SIGTERM])  # no warning: no hang
    give_up.start()
    try:
        assert proc.stdout.readline().startswith("[pneuma] ready ")
        warnings = []
        for line in iter(proc.stderr.readline, ""):
            if "warning" in line:
                warnings.append(line)
                break
    finally:
        give_up.cancel()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert warnings and "manifest.json is not valid JSON" in warnings[0], warnings


def test_a_taken_port_is_named_with_the_one_used(tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        proc = _run(tmp_path / "deck", "slide", "--port", str(port))
        line = proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    finally:
        taken.close()
    used = int(line.split("http://127.0.0.1:")[1].split("/")[0])
    assert used != port
    assert f"port {port} is taken; using {used}" in err, err
