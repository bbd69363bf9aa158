"""Run the whole test suite inside a loopback-only network namespace.

Tests start real programs (the Claude Code CLI, Chromium) that could try to
reach the internet. Before any test is collected, pytest re-executes itself
under ``unshare -n`` with only ``lo`` up, so nothing can leave the machine
whatever those programs attempt. Set PNEUMA_TEST_NO_NETNS=1 to opt out (only
for environments without user namespaces; the real-CLI tests then refuse
to run).
"""

from __future__ import annotations

import os
import shutil
import socket
import sys

# The stress suite's closing summary (it must be loaded where the xdist
# controller sees it: here, at the root).
pytest_plugins = ["tests.stress.summary"]


def network_is_loopback_only() -> bool:
    """True when this process's network namespace has no interface but lo.

    Asked through netlink (socket.if_nameindex), not /sys/class/net, which
    shows the namespace that mounted /sys rather than our own."""
    try:
        interfaces = {name for _, name in socket.if_nameindex()}
    except OSError:
        return False
    return interfaces <= {"lo"}


def _reexec_in_namespace(config) -> None:
    if os.environ.get("PNEUMA_TEST_NETNS") == "1" or os.environ.get("PNEUMA_TEST_NO_NETNS") == "1":
        return
    if network_is_loopback_only() or shutil.which("unshare") is None:
        return
    os.environ["PNEUMA_TEST_NETNS"] = "1"
    flags = "-n" if os.geteuid() == 0 else "-rn"
    # Without lo up even 127.0.0.1 is unreachable inside the new namespace.
    script = 'ip link set lo up 2>/dev/null || true; exec "$0" "$@"'
    # pytest already redirected fds 1 and 2 to its capture files; give the
    # re-executed run the real terminal back.
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.stop_global_capturing()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvp(
        "unshare",
        ["unshare", flags, "--", "sh", "-c", script, sys.executable, "-m", "pytest", *sys.argv[1:]],
    )


def _private_pneuma_home() -> None:
    """Every `pneuma run` a test starts records its workspace in the list of
    recent workspaces ($PNEUMA_HOME/workspaces.json): keep that list in a
    folder of the run's own, never the user's. Tests that look at the list
    set PNEUMA_HOME themselves."""
    if "PNEUMA_HOME" not in os.environ:
        import atexit
        import shutil
        import tempfile

        home = tempfile.mkdtemp(prefix="pneuma-test-home-")
        os.environ["PNEUMA_HOME"] = home
        # The process that made it (xdist's workers inherit it) removes it,
        # so that runs do not leave a folder each in /tmp.
        atexit.register(shutil.rmtree, home, ignore_errors=True)


def _no_headless_viewer_unasked() -> None:
    """With no tab open, a viewer action starts the server's headless viewer
    (a Chromium, seconds). Tests that are not about it expect today's
    answer without a tab, so it is off unless a test turns it on
    (tests/headless_viewer/ and its stress part do)."""
    os.environ.setdefault("PNEUMA_HEADLESS_VIEWER", "0")


def pytest_configure(config) -> None:
    _reexec_in_namespace(config)
    _private_pneuma_home()
    _no_headless_viewer_unasked()
