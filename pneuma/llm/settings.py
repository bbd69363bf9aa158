"""``LLMSettings``: which model the host's one LLM gateway calls, and how.

The credentials are never stored here, only the name of the environment
variable that holds them (``api_key_env``), so settings can be written to a
workspace file and shown in logs without leaking a key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

DEFAULT_MODEL = "claude-sonnet-4-5"
PROVIDERS = ("anthropic", "openai")
OPENAI_KEY_ENV = "OPENAI_API_KEY"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# A local server (Ollama, vLLM, llama.cpp, LM Studio) needs no key; the SDK
# still wants one, and this placeholder is what those servers ignore.
NO_KEY_PLACEHOLDER = "no-key"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class InvalidLLMSettings(ValueError):
    """Settings that no call could succeed with; the message says what to fix."""


@dataclass
class LLMSettings:
    """One model profile: the provider, model and limits of a call.

    ``provider`` is ``"anthropic"`` (the Messages API) or ``"openai"`` (the
    Chat Completions API of OpenAI and of every server that copies it:
    DeepSeek, Kimi, Qwen, Ollama, vLLM, llama.cpp, LM Studio).

    ``api_key_env`` names the environment variable holding the API key.
    None means, for anthropic, what its SDK reads by itself
    (``ANTHROPIC_API_KEY``, else ``ANTHROPIC_AUTH_TOKEN``); for openai,
    ``OPENAI_API_KEY`` if it is set, else no key (a local server).
    ``base_url`` None means ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``,
    else the provider's own endpoint.
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

    def problems(self) -> list[str]:
        """What is wrong with these settings, one sentence each (empty: fine)."""
        found: list[str] = []
        if self.provider not in PROVIDERS:
            found.append(f"provider is {self.provider!r}; it must be one of "
                         + ", ".join(repr(p) for p in PROVIDERS))
        if not str(self.model or "").strip():
            found.append("model is empty: name the model the endpoint serves "
                         "(e.g. gpt-4.1, deepseek-chat, qwen2.5-coder:7b)")
        if self.base_url is not None:
            parts = urlsplit(str(self.base_url))
            if parts.scheme not in ("http", "https") or not parts.hostname:
                found.append(f"base_url {self.base_url!r} is not an http(s) URL "
                             "(e.g. http://127.0.0.1:11434/v1)")
        if self.api_key_env is not None and not _ENV_NAME.fullmatch(str(self.api_key_env)):
            found.append(f"api_key_env must be the NAME of an environment variable "
                         f"(e.g. DEEPSEEK_API_KEY), not {_redacted(str(self.api_key_env))}")
        if not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            found.append(f"max_tokens must be a positive integer, not {self.max_tokens!r}")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            found.append(f"temperature must be between 0 and 2, not {self.temperature!r}")
        return found

    def validate(self) -> LLMSettings:
        """These settings, or ``InvalidLLMSettings`` naming every problem."""
        found = self.problems()
        if found:
            raise InvalidLLMSettings("invalid LLM settings: " + "; ".join(found))
        return self


def _redacted(value: str) -> str:
    """A value someone may have pasted a key into, shown without the key."""
    return repr(value) if len(value) <= 12 and " " not in value else repr(value[:4] + "…")


def key_variable(settings: LLMSettings, env: Mapping[str, str]) -> str | None:
    """The environment variable a call with ``settings`` takes its key from
    (None: no key is sent)."""
    if settings.api_key_env:
        return settings.api_key_env
    if settings.provider == "openai":
        return OPENAI_KEY_ENV if env.get(OPENAI_KEY_ENV) else None
    if env.get("ANTHROPIC_API_KEY") or not env.get("ANTHROPIC_AUTH_TOKEN"):
        return "ANTHROPIC_API_KEY"
    return "ANTHROPIC_AUTH_TOKEN"


def openai_base_url(settings: LLMSettings, env: Mapping[str, str]) -> str:
    """Where an openai-provider call goes."""
    return (settings.base_url or env.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL).rstrip("/")


def api_credentials(settings: LLMSettings, env: Mapping[str, str]) -> dict[str, Any]:
    """Keyword arguments for the provider's SDK client: the key (or auth
    token) and the endpoint found in ``env``; no key at all when none is set."""
    if settings.provider == "openai":
        variable = key_variable(settings, env)
        openai: dict[str, Any] = {"base_url": openai_base_url(settings, env)}
        if variable and env.get(variable):
            openai["api_key"] = env[variable]
        return openai
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
    """Whether ``env`` holds a key for ``settings`` (so a call can succeed).
    An openai-provider profile that names no key variable needs none when it
    points at a server of its own (``base_url``/``OPENAI_BASE_URL``)."""
    credentials = api_credentials(settings, env)
    if credentials.get("api_key") or credentials.get("auth_token"):
        return True
    if settings.provider == "openai" and not settings.api_key_env:
        return credentials["base_url"] != OPENAI_DEFAULT_BASE_URL
    return False


def credentials_problem(settings: LLMSettings, env: Mapping[str, str]) -> str | None:
    """Why a call with ``settings`` cannot succeed, for the person (None: it can).
    Names the setting or the variable to fix, never a key."""
    found = settings.problems()
    if found:
        return "invalid LLM settings: " + "; ".join(found)
    if has_credentials(settings, env):
        return None
    if settings.provider == "openai":
        where = openai_base_url(settings, env)
        variable = settings.api_key_env or OPENAI_KEY_ENV
        return (f"the openai provider calls {where} and needs an API key in {variable}; "
                "set it in the environment that starts Pneuma (a local server needs no key: "
                "set base_url to it instead)")
    variable = settings.api_key_env or "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"
    return f"the anthropic provider needs an API key in {variable}"
