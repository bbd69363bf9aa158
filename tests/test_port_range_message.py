"""The 'no free port' message names only ports that exist (issue 25, item 21)."""

import socket

import pytest

from pneuma.startup.runner import PortUnavailable, bind_socket


def test_no_free_port_message_names_only_real_ports() -> None:
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        held.bind(("127.0.0.1", 65535))
    except OSError:
        held.close()
        pytest.skip("port 65535 is taken by something else")
    held.listen(1)
    try:
        with pytest.raises(PortUnavailable) as caught:
            bind_socket("127.0.0.1", 65535, tries=50)
    finally:
        held.close()
    message = str(caught.value)
    assert "65535–65535" in message
    assert "65584" not in message
