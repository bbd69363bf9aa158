"""``ImageSettings``: which images endpoint the gateway's image side calls.

Configured the way the native backend's model is (docs/native.md): the
person's file ``~/.config/pneuma/images.json`` (``$XDG_CONFIG_HOME``), then
the workspace's ``.pneuma/images.json`` (same keys, camelCase or
snake_case), then ``PNEUMA_IMAGES_<KEY>`` environment variables. Only the
NAME of the key's variable is ever stored (``api_key_env``): a file that
holds a key-shaped value there is refused with a sentence, never echoed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pneuma.core.state_files import read_state_bytes
from pneuma.core.user_files import config_home
from pneuma.llm.settings import OPENAI_DEFAULT_BASE_URL, OPENAI_KEY_ENV

DEFAULT_IMAGE_MODEL = "gpt-image-1"
SETTINGS_FILE = "images.json"
MAX_SETTINGS_BYTES = 64 * 1024
ENV_PREFIX = "PNEUMA_IMAGES_"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIZE = re.compile(r"[1-9][0-9]{1,4}x[1-9][0-9]{1,4}")

WHAT_TO_SET = (
    "set PNEUMA_IMAGES_BASE_URL to an OpenAI-compatible images server (e.g. http://127.0.0.1:8080/v1) "
    "with PNEUMA_IMAGES_MODEL, or OPENAI_API_KEY for OpenAI's own; or write ~/.config/pneuma/images.json "
    '{"baseUrl": ..., "model": ..., "apiKeyEnv": "NAME_OF_THE_KEY_VARIABLE"}'
)


@dataclass
class ImageSettings:
    """One images endpoint: ``POST {base_url}/images/generations``.

    ``name``: what records call the provider (None: ``openai`` for OpenAI's
    own endpoint, else the endpoint's host and port). ``base_url`` None:
    ``OPENAI_BASE_URL``, else OpenAI. ``api_key_env``: the NAME of the
    variable holding the key (None: ``OPENAI_API_KEY`` when set and no
    ``base_url`` of its own is named, else no key, which a local server
    takes). ``send_seed`` None: the seed is sent
    to every endpoint but OpenAI's own (which has no such parameter).
    ``configured``: whether anything named this endpoint (a file, a
    variable, or an OpenAI key in the environment).
    """

    name: str | None = None
    model: str = DEFAULT_IMAGE_MODEL
    base_url: str | None = None
    api_key_env: str | None = None
    size: str = "1024x1024"
    request_timeout: float = 120.0
    max_retries: int = 1  # 429 / 5xx / unreachable: one more try at most, never a storm
    send_seed: bool | None = None
    configured: bool = False

    def endpoint(self, env: Mapping[str, str]) -> str:
        """The OpenAI-style root the call goes to (no trailing slash)."""
        return (self.base_url or env.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL).rstrip("/")

    def provider_name(self, env: Mapping[str, str]) -> str:
        """The configured name records keep (never a key)."""
        if self.name:
            return self.name
        endpoint = self.endpoint(env)
        if endpoint == OPENAI_DEFAULT_BASE_URL:
            return "openai"
        return urlsplit(endpoint).netloc or "openai-compatible"

    def key_variable(self, env: Mapping[str, str]) -> str | None:
        """The variable the key is read from (None: no key is sent)."""
        if self.api_key_env:
            return self.api_key_env
        # The person's OpenAI key goes only where OpenAI's own variables
        # point, never to a base_url set for images alone (a local server).
        return OPENAI_KEY_ENV if env.get(OPENAI_KEY_ENV) and self.base_url is None else None

    def api_key(self, env: Mapping[str, str]) -> str | None:
        variable = self.key_variable(env)
        return env.get(variable) or None if variable else None

    def sends_seed(self, env: Mapping[str, str]) -> bool:
        if self.send_seed is not None:
            return self.send_seed
        return self.endpoint(env) != OPENAI_DEFAULT_BASE_URL

    def problems(self) -> list[str]:
        """What is wrong with these settings, one sentence each."""
        found: list[str] = []
        if not str(self.model or "").strip():
            found.append("model is empty: name the image model the endpoint serves (e.g. gpt-image-1)")
        if self.base_url is not None:
            parts = urlsplit(str(self.base_url))
            if parts.scheme not in ("http", "https") or not parts.hostname:
                found.append(f"base_url {self.base_url!r} is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)")
        if self.api_key_env is not None and not _ENV_NAME.fullmatch(str(self.api_key_env)):
            found.append("api_key_env must be the NAME of an environment variable (e.g. OPENAI_API_KEY), "
                         "not a key")
        if not _SIZE.fullmatch(str(self.size)):
            found.append(f"size {self.size!r} is not WIDTHxHEIGHT (e.g. 1024x1024)")
        return found

    def problem(self, env: Mapping[str, str]) -> str | None:
        """Why no image can be generated now, with what to set (None: it can)."""
        if not self.configured:
            return "no image provider is configured: " + WHAT_TO_SET
        found = self.problems()
        if found:
            return "invalid image provider settings: " + "; ".join(found)
        endpoint = self.endpoint(env)
        if endpoint == OPENAI_DEFAULT_BASE_URL and not self.api_key(env):
            variable = self.api_key_env or OPENAI_KEY_ENV
            return (f"the image provider {endpoint} needs an API key in {variable}; set it in the "
                    "environment that starts Pneuma (a local server needs none: set PNEUMA_IMAGES_BASE_URL)")
        if self.api_key_env and not env.get(self.api_key_env):
            return (f"the image provider {endpoint} takes its key from {self.api_key_env}, which is not set; "
                    "set it in the environment that starts Pneuma")
        return None


def load_image_settings(workspace: Path | None = None, env: Mapping[str, str] | None = None) -> ImageSettings:
    """The image settings in force for ``workspace``: defaults, the person's
    file, the workspace's file, then ``PNEUMA_IMAGES_*`` variables. A value of
    the wrong kind is ignored (the default stays), never fatal."""
    env = os.environ if env is None else env
    settings = ImageSettings()
    texts = [_read_person_file(config_home(env) / SETTINGS_FILE)]
    if workspace is not None:
        texts.append(_read_workspace_file(Path(workspace) / ".pneuma" / SETTINGS_FILE))
    for text in texts:
        for name, value in _settings_of(text).items():
            settings.configured |= _set(settings, name, value)
    for name in _NAMES:
        raw = env.get(ENV_PREFIX + name.upper())
        if raw is not None and raw != "":
            settings.configured |= _set(settings, name, raw)
    settings.configured |= bool(env.get(OPENAI_KEY_ENV))
    return settings


def _read_person_file(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError:
        return b""


def _read_workspace_file(file: Path) -> bytes:
    """Pneuma's own state under .pneuma/ is never read through a link
    (docs/security.md): a link planted there counts as no file."""
    try:
        return read_state_bytes(file, limit=MAX_SETTINGS_BYTES)
    except OSError:
        return b""


def _settings_of(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", str(key)).lower(): value for key, value in data.items()}


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(value)


def _optional_text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "name": _optional_text, "model": str, "base_url": _optional_text, "api_key_env": _optional_text,
    "size": str, "request_timeout": float, "max_retries": lambda v: max(0, min(3, int(v))),
    "send_seed": lambda v: None if v is None else _boolean(v),
}
_NAMES = tuple(f.name for f in fields(ImageSettings) if f.name in _CONVERTERS)


def _set(settings: ImageSettings, name: str, value: Any) -> bool:
    """Set one field; True when it was set."""
    convert = _CONVERTERS.get(name)
    if convert is None:
        return False
    try:
        setattr(settings, name, convert(value))
    except (TypeError, ValueError):
        return False
    return True
