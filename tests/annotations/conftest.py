"""The server fixtures of tests/server (a real app, the fake agent)."""

from tests.server.conftest import make_server, server, slide_mode  # noqa: F401
