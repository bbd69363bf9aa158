"""Model and limits of the native runtime.

Defaults, then ``W/.pneuma/native.json`` (same keys, camelCase or
snake_case), then environment variables (``PNEUMA_NATIVE_<KEY>``), then the
``--model`` flag. The model call itself goes through the host's LLM gateway:
``llm_settings()`` is what this config asks of it. ``provider`` is
``anthropic`` (the default: every existing config means it) or ``openai``
(an OpenAI-compatible Chat Completions server; then ``model`` must be named,
since the default is a Claude model). The API key and endpoint come from the
environment the provider's SDK reads (``ANTHROPIC_API_KEY`` or
``ANTHROPIC_AUTH_TOKEN``, ``ANTHROPIC_BASE_URL``; ``OPENAI_API_KEY``,
``OPENAI_BASE_URL``), unless ``apiKeyEnv`` names another variable or
``baseUrl`` another endpoint.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pneuma.api import LLMSettings, read_state_bytes

_MODEL_DEFAULTS = LLMSettings()


@dataclass
class NativeConfig:
    # what the gateway is asked for (see llm_settings)
    provider: str = _MODEL_DEFAULTS.provider  # "anthropic" | "openai"
    model: str = _MODEL_DEFAULTS.model
    max_tokens: int = _MODEL_DEFAULTS.max_tokens
    temperature: float | None = None
    max_retries: int = _MODEL_DEFAULTS.max_retries  # 429 / 5xx / connection errors before any output
    retry_base_delay: float = _MODEL_DEFAULTS.retry_base_delay  # seconds; doubled per attempt, capped at 30
    request_timeout: float = _MODEL_DEFAULTS.request_timeout
    base_url: str | None = None  # None: ANTHROPIC_BASE_URL / OPENAI_BASE_URL, else the SDK's default
    api_key_env: str | None = None  # None: ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN; OPENAI_API_KEY
    # the runtime's own limits
    max_turns: int = 40  # model calls per task (each tool round is one)
    ack_timeout: float = 10.0  # a browser client must acknowledge an action this fast
    action_timeout: float = 60.0  # and finish it this fast
    selection_timeout: float = 600.0  # waiting for the person to pick a browser client
    confirmation_timeout: float = 600.0
    inline_limit: int = 256 * 1024  # bigger readability text goes to an artifact
    page_text_limit: int = 20_000  # characters of page text the model gets per page
    history_limit: int = 200  # conversation messages sent to the model at most

    @classmethod
    def load(cls, workspace: Path, model: str | None = None,
             env: Mapping[str, str] | None = None) -> NativeConfig:
        env = dict(os.environ if env is None else env)
        config = cls()
        names = {f.name for f in fields(cls)}
        model_named = False
        data = _read_settings(workspace / ".pneuma" / "native.json")
        if data:
            for key, value in data.items():
                name = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
                if name in names:
                    config._set(name, value)
                    model_named = model_named or name == "model"
        for name in names:
            raw = env.get(f"PNEUMA_NATIVE_{name.upper()}")
            if raw is not None:
                config._set(name, raw)
                model_named = model_named or name == "model"
        if model:
            config.model = model
        elif config.provider != "anthropic":
            if not model_named:
                # The default Claude model means nothing to another provider:
                # leave it empty so the settings say "name the model".
                config.model = ""
        elif env.get("ANTHROPIC_MODEL") and not env.get("PNEUMA_NATIVE_MODEL"):
            config.model = env["ANTHROPIC_MODEL"]
        return config

    def llm_settings(self) -> LLMSettings:
        """What the LLM gateway is asked for, as this config stands now
        (``--model`` and the web UI's model switch change ``model``)."""
        return LLMSettings(
            provider=self.provider, model=self.model, max_tokens=self.max_tokens, temperature=self.temperature,
            max_retries=self.max_retries, retry_base_delay=self.retry_base_delay,
            request_timeout=self.request_timeout, base_url=self.base_url,
            api_key_env=self.api_key_env,
        )

    def _set(self, name: str, value: Any) -> None:
        """Set ``name`` from a file or environment value; a value of the
        wrong kind is ignored (the default stays), never fatal."""
        convert = _CONVERTERS[name]
        try:
            setattr(self, name, convert(value))
        except (TypeError, ValueError):
            pass


# Far more than any settings file: a bigger one is not read whole.
MAX_SETTINGS_BYTES = 64 * 1024


def _read_settings(file: Path) -> dict[str, Any]:
    """The workspace's settings file as a JSON object; {} when there is
    none or it is not one. Pneuma's own state under .pneuma/ is never read
    through a link (docs/security.md): a link planted there counts as no
    file, so it cannot point the runtime at another endpoint or key."""
    try:
        data = json.loads(read_state_bytes(file, limit=MAX_SETTINGS_BYTES))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _optional(kind: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``kind``, except that null or an empty string means "not set"."""
    return lambda value: None if value is None or value == "" else kind(value)


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    f.name: type(f.default) for f in fields(NativeConfig) if f.default is not None
}
_CONVERTERS.update(temperature=_optional(float), base_url=_optional(str),
                   api_key_env=_optional(str), provider=lambda value: str(value).strip().lower())
