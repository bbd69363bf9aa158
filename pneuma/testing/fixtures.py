"""pytest fixtures for plugin tests: ``pytest_plugins = ["pneuma.testing"]``.

``pneuma_workspace`` is synchronous. ``pneuma_server`` is an async fixture:
it needs an asyncio plugin for pytest (pytest-asyncio, which pytest-aiohttp
brings), and is declared with ``pytest_asyncio.fixture`` when that is
installed so that it works in its strict mode too.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from pneuma.testing.server import RunningServer, serve
from pneuma.testing.workspace import ModeLike, make_workspace

try:
    import pytest_asyncio
except ImportError:  # an asyncio plugin in auto mode (or anyio) takes a plain fixture
    async_fixture = pytest.fixture
else:
    async_fixture = pytest_asyncio.fixture

WorkspaceFactory = Callable[..., Path]
ServerFactory = Callable[..., Awaitable[RunningServer]]


@pytest.fixture
def pneuma_workspace(tmp_path: Path) -> WorkspaceFactory:
    """``pneuma_workspace(mode, params=None, name=None) -> Path``: a fresh
    workspace under the test's ``tmp_path``, seeded as ``pneuma init`` does."""
    numbers = itertools.count(1)

    def make(mode: ModeLike, params: Mapping[str, Any] | None = None,
             name: str | None = None) -> Path:
        return make_workspace(mode, tmp_path / (name or f"workspace-{next(numbers)}"), params)

    return make


@async_fixture
async def pneuma_server(pneuma_workspace: WorkspaceFactory) -> AsyncIterator[ServerFactory]:
    """``await pneuma_server(mode, workspace=None, **options) -> RunningServer``:
    a real server (see ``serve``; ``options`` are its keywords), over a fresh
    workspace unless one is given, stopped when the test ends."""
    async with contextlib.AsyncExitStack() as stack:

        async def start(mode: ModeLike, workspace: Path | str | None = None,
                        **options: Any) -> RunningServer:
            root = workspace if workspace is not None else pneuma_workspace(
                mode, options.get("params"))
            return await stack.enter_async_context(serve(mode, root, **options))

        yield start
