"""What the Codex tests share with the browser test: the CODEX_HOME
config that names the fake Responses API, and a proxy that notes any
request Codex makes elsewhere."""

from __future__ import annotations

import asyncio
import contextlib


def codex_config(base_url: str, retries: int = 0) -> str:
    """``retries``: Codex's own retries of a failed request to the model
    (``stream_max_retries``; HTTP-level retries stay off so each try is one
    request the fake sees)."""
    return f"""\
# A model Codex knows (its bundled metadata gives it the apply_patch tool
# real models have); only the fake ever answers for it.
model = "gpt-5.5"
model_provider = "fake"

[model_providers.fake]
name = "Fake Responses API"
base_url = "{base_url}"
env_key = "FAKE_OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = {retries}
"""


class RecordingProxy:
    """An HTTP(S) proxy that forwards nothing and notes what was asked.

    Codex honours HTTPS_PROXY/HTTP_PROXY; with NO_PROXY for loopback, any
    request it makes to anything but the fake API (update checks,
    telemetry, a login) arrives here, so a test can assert there was none.
    The namespace would stop such a request anyway; this makes it seen."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self._server: asyncio.AbstractServer | None = None
        self.url = ""

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        if line:
            self.requests.append(line.decode("latin-1").strip())
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
