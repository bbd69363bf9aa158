"""The guard of the tests that start real programs (the Claude Code CLI,
`pneuma run`): they must run where nothing can reach beyond this machine.
Used by tests/e2e/conftest.py and tests/test_real_claude_cli.py.
"""

from __future__ import annotations

import socket

import pytest


def fail_unless_loopback_only(tests: str, pytest_args: str) -> None:
    """Fail the test unless this process's network namespace has only ``lo``;
    ``tests`` names them and ``pytest_args`` runs them, in the message.

    Asked through netlink (socket.if_nameindex): /sys/class/net shows the
    namespace that mounted /sys, not ours."""
    interfaces = sorted(name for _, name in socket.if_nameindex())
    if interfaces != ["lo"]:
        pytest.fail(
            f"{tests} must run in a loopback-only network namespace, "
            f"but these interfaces exist: {interfaces}. Run pytest from the repository "
            "root (its conftest re-executes under `unshare -n`), or by hand: "
            f"`unshare -n -- sh -c 'ip link set lo up && exec .venv/bin/python -m pytest {pytest_args}'`."
        )
