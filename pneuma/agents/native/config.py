"""Model and limits of the native runtime.

Defaults, then ``W/.pneuma/native.json`` (same keys, camelCase or
snake_case), then environment variables (``PNEUMA_NATIVE_<KEY>``), then the
``--model`` flag. The API key and endpoint come from the environment the
anthropic SDK reads (``ANTHROPIC_API_KEY`` or ``ANTHROPIC_AUTH_TOKEN``,
``ANTHROPIC_BASE_URL``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "claude-sonnet-4-5"


@dataclass
class NativeConfig:
    model: str = DEFAULT_MODEL
    max_tokens: int = 8192
    max_turns: int = 40  # model calls per task (each tool round is one)
    max_retries: int = 4  # for 429 / 5xx / connection errors before any output
    retry_base_delay: float = 1.0  # seconds; doubled per attempt, capped at 30
    request_timeout: float = 600.0
    ack_timeout: float = 10.0  # a browser client must acknowledge an action this fast
    action_timeout: float = 60.0  # and finish it this fast
    selection_timeout: float = 600.0  # waiting for the person to pick a browser client
    confirmation_timeout: float = 600.0
    inline_limit: int = 256 * 1024  # bigger readability text goes to an artifact
    page_text_limit: int = 20_000  # characters of page text the model gets per page
    history_limit: int = 200  # conversation messages sent to the model at most

    @classmethod
    def load(cls, workspace: Path, model: str | None = None,
             env: dict[str, str] | None = None) -> NativeConfig:
        env = dict(os.environ if env is None else env)
        config = cls()
        names = {f.name: f for f in fields(cls)}
        file = workspace / ".pneuma" / "native.json"
        if file.is_file():
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            for key, value in (data or {}).items():
                name = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
                if name in names:
                    config._set(name, value)
        for name in names:
            raw = env.get(f"PNEUMA_NATIVE_{name.upper()}")
            if raw is not None:
                config._set(name, raw)
        if model:
            config.model = model
        elif env.get("ANTHROPIC_MODEL") and not env.get("PNEUMA_NATIVE_MODEL"):
            config.model = env["ANTHROPIC_MODEL"]
        return config

    def _set(self, name: str, value: Any) -> None:
        kind = type(getattr(self, name))
        try:
            setattr(self, name, kind(value))
        except (TypeError, ValueError):
            pass


def api_credentials(env: dict[str, str]) -> dict[str, Any]:
    """Keyword arguments for ``AsyncAnthropic``; empty dict of keys when none is set."""
    kwargs: dict[str, Any] = {}
    if env.get("ANTHROPIC_API_KEY"):
        kwargs["api_key"] = env["ANTHROPIC_API_KEY"]
    elif env.get("ANTHROPIC_AUTH_TOKEN"):
        kwargs["auth_token"] = env["ANTHROPIC_AUTH_TOKEN"]
    if env.get("ANTHROPIC_BASE_URL"):
        kwargs["base_url"] = env["ANTHROPIC_BASE_URL"]
    return kwargs


def has_credentials(env: dict[str, str]) -> bool:
    return bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))
