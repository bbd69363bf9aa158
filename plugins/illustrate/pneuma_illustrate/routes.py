"""The illustrate mode's own HTTP route: whether an image provider is set.

``GET /api/illustrate/provider`` answers ``{configured, ready, provider,
model, endpoint, problem, what_to_set}``: the page shows ``problem`` (with
what to set) when no image can be made, and ``pneuma run`` says the same
in the terminal once, at start-up. The answer names the endpoint and the
key's variable, never a key.
"""

from __future__ import annotations

import os
import sys
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from aiohttp import web

from pneuma.api import ImageSettings, Pneuma, load_image_settings, pneuma_of

STATUS_PATH = "/api/illustrate/provider"
WHAT_TO_SET = ("PNEUMA_IMAGES_BASE_URL (an OpenAI-compatible images server, e.g. http://127.0.0.1:8080/v1) "
               "and PNEUMA_IMAGES_MODEL, or OPENAI_API_KEY for OpenAI's own; or ~/.config/pneuma/images.json")


def provider_status(settings: ImageSettings, env: Any) -> dict[str, Any]:
    problem = settings.problem(env)
    return {"configured": settings.configured, "ready": problem is None,
            "provider": settings.provider_name(env) if settings.configured else None,
            "model": settings.model if settings.configured else None,
            "endpoint": _without_credentials(settings.endpoint(env)) if settings.configured else None,
            "key_variable": settings.key_variable(env),
            "problem": problem, "what_to_set": None if problem is None else WHAT_TO_SET}


def _without_credentials(url: str) -> str:
    """An endpoint as shown: any ``user:password@`` in it left out."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


async def provider(request: web.Request) -> web.Response:
    workspace = pneuma_of(request).workspace
    return web.json_response(provider_status(load_image_settings(workspace, os.environ), os.environ))


def illustrate_routes(pneuma: Pneuma) -> list[web.AbstractRouteDef]:
    async def say_what_to_set() -> None:
        problem = load_image_settings(pneuma.workspace, os.environ).problem(os.environ)
        if problem is not None:
            print(f"[pneuma] illustrate: generate_image cannot make images yet: {problem}",
                  file=sys.stderr, flush=True)

    pneuma.on_startup(say_what_to_set)
    return [web.get(STATUS_PATH, provider)]
