"""The gateway's image side: ``ImageGateway.generate`` calls an
OpenAI-compatible images endpoint (``POST {base_url}/images/generations``,
OpenAI's own and the local servers that speak it) on the official ``openai``
SDK and returns the decoded images.

It fails the way the chat side does (``GatewayError`` with a ``kind``): a
refused key names the variable to set (``auth_failed``), a refused prompt is
the provider's own message (``content_policy``, or the API's error code), an
endpoint that does not answer names its address (``connection_error``,
``timeout``), no provider at all says what to set (``not_configured``). Time
is bounded (``request_timeout`` per call) and a 429/5xx/unreachable endpoint
is tried again at most ``max_retries`` times, after a short wait.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pneuma.llm.anthropic_provider import error_text, retry_after
from pneuma.llm.gateway import GatewayError
from pneuma.llm.image_settings import ImageSettings
from pneuma.llm.settings import NO_KEY_PLACEHOLDER

MAX_IMAGES = 4
MAX_IMAGE_BYTES = 32 * 1024 * 1024
_RETRY_WAIT_CAP = 10.0  # seconds; a server's longer retry-after ends the call instead
_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpg"))


@dataclass(frozen=True)
class GeneratedImage:
    """One image the endpoint made: its bytes, their format (``png``,
    ``jpg`` or ``webp``, read from the bytes), and the prompt the provider
    says it used when it rewrote ours (else None)."""

    data: bytes
    format: str
    revised_prompt: str | None = None


def image_format(data: bytes) -> str | None:
    """``png``, ``jpg`` or ``webp`` from the file's first bytes; None for anything else."""
    for signature, name in _SIGNATURES:
        if data.startswith(signature):
            return name
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


class ImageGateway:
    """Image generation on one ``ImageSettings``; ``env`` is where the key
    and endpoint are looked up (``os.environ`` when None)."""

    def __init__(self, settings: ImageSettings, env: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self.env: Mapping[str, str] = os.environ if env is None else env

    def problem(self) -> str | None:
        """Why no image can be generated now, naming what to set; None when it can."""
        return self.settings.problem(self.env)

    async def generate(self, prompt: str, *, n: int = 1, size: str | None = None,
                       seed: int | None = None) -> list[GeneratedImage]:
        """``n`` images (1-4) of ``prompt``; raises ``GatewayError``."""
        problem = self.problem()
        if problem is not None:
            kind = "not_configured" if not self.settings.configured else "invalid_settings"
            raise GatewayError(problem, None, kind)
        if not 1 <= n <= MAX_IMAGES:
            raise GatewayError(f"n must be between 1 and {MAX_IMAGES}, not {n}", None, "invalid_request_error")
        import openai

        client = openai.AsyncOpenAI(api_key=self.settings.api_key(self.env) or NO_KEY_PLACEHOLDER,
                                    base_url=self.settings.endpoint(self.env), max_retries=0,
                                    timeout=self.settings.request_timeout)
        try:
            answer = await self._call(client, self._request(prompt, n, size, seed))
            return await self._images(client, answer)
        finally:
            await client.close()

    def _request(self, prompt: str, n: int, size: str | None, seed: int | None) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.settings.model, "prompt": prompt, "n": n,
                                   "size": size or self.settings.size}
        # OpenAI's gpt-image models always answer base64 and refuse the
        # parameter; everything else (dall-e, local servers) is asked for it.
        if not self.settings.model.startswith("gpt-image"):
            request["response_format"] = "b64_json"
        if seed is not None and self.settings.sends_seed(self.env):
            request["extra_body"] = {"seed": seed}
        return request

    async def _call(self, client: Any, request: dict[str, Any]) -> Any:
        attempt = 0
        while True:
            try:
                return await client.images.generate(**request)
            except Exception as exc:  # the SDK's errors, sorted below
                failure = self._failure(exc)
                wait = _retry_wait(exc, attempt) if _retryable(failure) else None
                if wait is None or attempt >= self.settings.max_retries:
                    raise failure from None
            attempt += 1
            await asyncio.sleep(wait)

    def _failure(self, exc: Exception) -> GatewayError:
        import openai

        where = self.settings.endpoint(self.env)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status in (401, 403):
                variable = self.settings.key_variable(self.env)
                said = error_text(exc)
                if variable:
                    return GatewayError(f"{where} refused the API key in {variable} ({said}); check {variable}, "
                                        "or set PNEUMA_IMAGES_API_KEY_ENV to the variable that holds this "
                                        "server's key", status, "auth_failed")
                return GatewayError(f"{where} wants an API key and none was sent ({said}); set "
                                    "PNEUMA_IMAGES_API_KEY_ENV to the NAME of the variable that holds it",
                                    status, "auth_failed")
            return GatewayError(f"{where}: {error_text(exc)}", status, _error_kind(exc))
        if isinstance(exc, openai.APITimeoutError):
            return GatewayError(f"the image provider at {where} did not answer within "
                                f"{self.settings.request_timeout:g} s", None, "timeout")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return GatewayError(f"could not reach the image provider at {where} ({type(cause).__name__}); "
                                "is it running, and is its base URL right (it usually ends in /v1)?",
                                None, "connection_error")
        return GatewayError(f"the image call to {where} failed: {type(exc).__name__}: {exc}"[:500],
                            None, "api_error")

    async def _images(self, client: Any, answer: Any) -> list[GeneratedImage]:
        where = self.settings.endpoint(self.env)
        images: list[GeneratedImage] = []
        for item in getattr(answer, "data", None) or []:
            data = await self._bytes(client, item, where)
            kind = image_format(data)
            if kind is None:
                raise GatewayError(f"{where} answered something that is not a PNG, JPEG or WebP image",
                                   None, "invalid_response")
            revised = getattr(item, "revised_prompt", None)
            images.append(GeneratedImage(data, kind, revised if isinstance(revised, str) and revised else None))
        if not images:
            raise GatewayError(f"{where} answered no image", None, "invalid_response")
        return images

    async def _bytes(self, client: Any, item: Any, where: str) -> bytes:
        encoded = getattr(item, "b64_json", None)
        if encoded:
            try:
                data = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise GatewayError(f"{where} answered an image whose base64 does not decode",
                                   None, "invalid_response") from None
            if len(data) > MAX_IMAGE_BYTES:
                raise GatewayError(f"{where} answered an image over {MAX_IMAGE_BYTES // 2**20} MB",
                                   None, "invalid_response")
            return data
        url = getattr(item, "url", None)
        if not url:
            raise GatewayError(f"{where} answered an image with neither b64_json nor url", None,
                               "invalid_response")
        return await self._download(client, str(url), where)

    async def _download(self, client: Any, url: str, where: str) -> bytes:
        """A server that answers a URL despite ``response_format``: fetched
        once, on the SDK's own HTTP client, within the same time bound."""
        try:
            response = await client._client.get(url, timeout=self.settings.request_timeout)
            response.raise_for_status()
        except Exception as exc:  # httpx's errors: the message names the address
            raise GatewayError(f"could not fetch the image {where} pointed at ({type(exc).__name__})",
                               None, "connection_error") from None
        data: bytes = response.content
        if len(data) > MAX_IMAGE_BYTES:
            raise GatewayError(f"the image {where} pointed at is over {MAX_IMAGE_BYTES // 2**20} MB",
                               None, "invalid_response")
        return data


def _retryable(failure: GatewayError) -> bool:
    status = failure.status
    return failure.kind in ("connection_error", "timeout") or status == 429 or (status or 0) >= 500


def _retry_wait(exc: Exception, attempt: int) -> float | None:
    """How long to wait before trying again; None when the server asks for
    longer than we wait (the call ends with its error instead)."""
    after = retry_after(exc)
    if after is not None:
        return max(0.0, after) if after <= _RETRY_WAIT_CAP else None
    return min(_RETRY_WAIT_CAP, 0.5 * 2.0**attempt)


def _error_kind(exc: Any) -> str:
    """``content_policy`` for a refused prompt (OpenAI says
    ``content_policy_violation`` or ``moderation_blocked``), else the API's
    error code or type."""
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else body
    if isinstance(error, dict):
        code, kind = error.get("code"), error.get("type")
        if code in ("content_policy_violation", "moderation_blocked") or kind == "content_policy_violation":
            return "content_policy"
        for value in (code, kind):
            if isinstance(value, str) and value:
                return value
    return "api_error"


__all__ = ["GeneratedImage", "ImageGateway", "image_format"]
