"""``LLMSettings``: which model the host's one LLM gateway calls, and how.

The credentials are never stored here, only the name of the environment
variable that holds them (``api_key_env``), so settings can be written to a
workspace file and shown in logs without leaking a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_MODEL = "claude-sonnet-4-5"


@dataclass
class LLMSettings:
    """One model profile: the provider, model and limits of a call.

    ``api_key_env`` names the environment variable holding the API key;
    None means what the anthropic SDK reads by itself (``ANTHROPIC_API_KEY``,
    else ``ANTHROPIC_AUTH_TOKEN``). ``base_url`` None means
    ``ANTHROPIC_BASE_URL``, else the SDK's default endpoint.
    """

    provider: str = "anthropic"
    model: str = DEFAULT_MODEL
    max_tokens: int = 8192
    temperature: float | None = None
    max_retries: int = 4  # for 429 / 5xx / connection errors before any output
    retry_base_delay: float = 1.0  # seconds; doubled per attempt, capped at 30
    request_timeout: float = 600.0
    base_url: str | None = None
    api_key_env: str | None = None


def api_credentials(settings: LLMSettings, env: Mapping[str, str]) -> dict[str, Any]:
    """Keyword arguments for ``AsyncAnthropic``: the key (or auth token) and
    the endpoint found in ``env``; no key at all when none is set."""
    kwargs: dict[str, Any] = {}
    if settings.api_key_env:
        if env.get(settings.api_key_env):
            kwargs["api_key"] = env[settings.api_key_env]
    elif env.get("ANTHROPIC_API_KEY"):
        kwargs["api_key"] = env["ANTHROPIC_API_KEY"]
    elif env.get("ANTHROPIC_AUTH_TOKEN"):
        kwargs["auth_token"] = env["ANTHROPIC_AUTH_TOKEN"]
    base_url = settings.base_url or env.get("ANTHROPIC_BASE_URL")
    if base_url:
        kwargs["base_url"] = base_url
    return kwargs


def has_credentials(settings: LLMSettings, env: Mapping[str, str]) -> bool:
    """Whether ``env`` holds a key for ``settings`` (so a call can succeed)."""
    credentials = api_credentials(settings, env)
    return bool(credentials.get("api_key") or credentials.get("auth_token"))
