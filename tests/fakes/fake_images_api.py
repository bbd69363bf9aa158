"""A fake OpenAI-compatible images endpoint (``POST /v1/images/generations``)
on 127.0.0.1, for the gateway's image side and the illustrate mode.

Every answer holds REAL PNGs (made with zlib, no imaging library): each
image is a flat colour picked from the request's number and the image's
index, with a stripe whose height is the image's index, so tests can tell
two images apart by their pixels (``colour_of``). The PNG's size is the
size asked for, scaled down by ``scale`` (default 16: a 1024x1024 request
answers a 64x64 PNG, keeping workspaces and shares small).

Every request body is kept (``requests``) with its Authorization header
(``keys``). ``fail_next(status, code, message)`` answers the next request
with OpenAI's error body: 401 ``invalid_api_key``, 400
``content_policy_violation``, 500 ``server_error``; ``fail_always`` every
request. With ``require_key`` a request without ``Bearer <that key>`` gets
401. ``answer_urls`` answers ``url`` fields (served here) instead of
``b64_json``; ``answer_data`` answers those bytes instead of each PNG.

    async with FakeImagesAPI() as api:     # api.base_url: http://127.0.0.1:PORT/v1
        ...
    api = ThreadedFakeImagesAPI()           # the same on a loop of its own (sync tests)
"""

from __future__ import annotations

import asyncio
import base64
import struct
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.fake_server import FakeModelServer

REVISED_SUFFIX = " (as the fake drew it)"
_PALETTE = ((220, 60, 50), (40, 140, 220), (60, 170, 90), (230, 170, 40), (150, 80, 200), (30, 30, 30))


def png(width: int, height: int, colour: tuple[int, int, int], stripe: int = 0) -> bytes:
    """A real RGB PNG: ``colour`` everywhere but a white band ``stripe``
    rows high at the top."""
    white = b"\x00" + b"\xff" * (3 * width)
    row = b"\x00" + bytes(colour) * width
    raw = b"".join(white if y < stripe else row for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def colour_of(request_number: int, index: int) -> tuple[int, int, int]:
    """The colour of image ``index`` (0-based) of request ``request_number`` (1-based)."""
    return _PALETTE[(request_number - 1 + index) % len(_PALETTE)]


@dataclass
class Failure:
    status: int
    code: str
    message: str
    kind: str = "invalid_request_error"


class FakeImagesAPI(FakeModelServer):
    api_root = "/v1"

    def __init__(self, require_key: str | None = None, scale: int = 16) -> None:
        super().__init__("fake-image-1")
        self.require_key = require_key
        self.scale = scale
        self.keys: list[str | None] = []
        self.answer_urls = False
        self.delay = 0.0  # seconds before answering (timeout tests)
        self.failing: Failure | None = None
        self._failures: deque[Failure] = deque()
        self._served: dict[str, bytes] = {}
        self.images_made: list[bytes] = []  # every PNG answered, in order
        self.answer_data: bytes | None = None  # answered instead of each PNG (a broken server)

    def fail_next(self, status: int, code: str, message: str, kind: str = "invalid_request_error") -> None:
        self._failures.append(Failure(status, code, message, kind))

    def fail_always(self, status: int, code: str, message: str, kind: str = "invalid_request_error") -> None:
        self.failing = Failure(status, code, message, kind)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/images/generations", self._generate)
        app.router.add_get("/files/{name}", self._file)

    async def _generate(self, request: web.Request) -> web.Response:
        self.keys.append(request.headers.get("Authorization"))
        body = await self.read_body(request)
        number = len(self.requests)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.require_key is not None and request.headers.get("Authorization") != f"Bearer {self.require_key}":
            return _error(Failure(401, "invalid_api_key", "Incorrect API key provided.", "invalid_request_error"))
        failure = self._failures.popleft() if self._failures else self.failing
        if failure is not None:
            return _error(failure)
        width, height = (int(part) for part in str(body.get("size") or "1024x1024").split("x"))
        data = []
        for index in range(int(body.get("n") or 1)):
            image = png(max(1, width // self.scale), max(1, height // self.scale),
                        colour_of(number, index), stripe=index)
            image = self.answer_data if self.answer_data is not None else image
            self.images_made.append(image)
            data.append(self._item(image, str(body.get("prompt") or ""), f"{number}-{index}", request))
        return web.json_response({"created": int(time.time()), "data": data})

    def _item(self, image: bytes, prompt: str, name: str, request: web.Request) -> dict[str, Any]:
        item: dict[str, Any] = {"revised_prompt": prompt + REVISED_SUFFIX}
        if self.answer_urls:
            self._served[name] = image
            item["url"] = f"http://{request.host}/files/{name}"
        else:
            item["b64_json"] = base64.b64encode(image).decode()
        return item

    async def _file(self, request: web.Request) -> web.Response:
        image = self._served.get(request.match_info["name"])
        if image is None:
            raise web.HTTPNotFound()
        return web.Response(body=image, content_type="image/png")


def _error(failure: Failure) -> web.Response:
    return web.json_response({"error": {"message": failure.message, "type": failure.kind,
                                        "param": None, "code": failure.code}}, status=failure.status)


class ThreadedFakeImagesAPI:
    """``FakeImagesAPI`` on an event loop in a background thread, for
    synchronous tests (Playwright's sync API owns the main thread's loop)."""

    def __init__(self, require_key: str | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.api = FakeImagesAPI(require_key=require_key)
        self.base_url: str = self._call(self.api.start())

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def requests(self) -> list[dict[str, Any]]:
        """Every request body so far, oldest first (a copy)."""

        async def copy() -> list[dict[str, Any]]:
            return list(self.api.requests)

        result: list[dict[str, Any]] = self._call(copy())
        return result

    def close(self) -> None:
        self._call(self.api.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
