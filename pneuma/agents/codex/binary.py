"""Finding the Codex CLI binary and the pinned version ``scripts/install`` brings."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

CODEX_VERSION = "0.169.0"  # keep in step with scripts/install
INSTALL_HINT = (
    "Codex CLI not found. Run scripts/install (it installs @openai/codex@"
    f"{CODEX_VERSION} into .venv/codex with npm), `npm install -g @openai/codex`, "
    "or point Pneuma at a binary with PNEUMA_CODEX_BIN."
)

# The npm package ships one native binary per platform as an optional
# dependency; these are the folder names inside its vendor/ directory.
_TRIPLES = {
    ("Linux", "x86_64"): "x86_64-unknown-linux-musl",
    ("Linux", "aarch64"): "aarch64-unknown-linux-musl",
    ("Darwin", "arm64"): "aarch64-apple-darwin",
    ("Darwin", "x86_64"): "x86_64-apple-darwin",
}


def project_install_dir() -> Path:
    """Where scripts/install puts the npm package: beside the venv's Python."""
    return Path(sys.prefix) / "codex"


def _native_in(prefix: Path) -> Path | None:
    """The platform binary inside an npm prefix (no Node needed to run it)."""
    triple = _TRIPLES.get((platform.system(), platform.machine()))
    if triple is None:
        return None
    for package in ("codex-linux-x64", "codex-linux-arm64", "codex-darwin-arm64",
                    "codex-darwin-x64"):
        candidate = (prefix / "node_modules" / "@openai" / package / "vendor" / triple
                     / "bin" / "codex")
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def pinned_binary() -> str | None:
    """The binary of the pinned version scripts/install put in the venv, if any."""
    native = _native_in(project_install_dir())
    return str(native) if native else None


def find_codex_binary(env: Mapping[str, str] | None = None) -> str | None:
    """``$PNEUMA_CODEX_BIN``, else ``codex`` on PATH, else the project-local
    install; None when there is none."""
    env = os.environ if env is None else env
    explicit = env.get("PNEUMA_CODEX_BIN")
    if explicit:
        path = shutil.which(explicit, path=env.get("PATH"))
        return path or (explicit if os.access(explicit, os.X_OK) else None)
    on_path = shutil.which("codex", path=env.get("PATH"))
    if on_path:
        return on_path
    return pinned_binary()


def codex_version(binary: str, env: Mapping[str, str]) -> str | None:
    """``codex --version`` ("codex-cli 0.169.0" → "0.169.0"); None when it fails."""
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10,
                              env=dict(env), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"(\d+\.\d+\.\d+\S*)", done.stdout)
    return match.group(1) if match else None


def codex_home(env: Mapping[str, str]) -> Path:
    if env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"])
    return Path(env.get("HOME") or Path.home()) / ".codex"


def credentials_found(env: Mapping[str, str]) -> str | None:
    """What gives Codex credentials, or None: OPENAI_API_KEY, a `codex
    login` (auth.json in CODEX_HOME), or a model provider of the person's
    own in config.toml (its key is its own business: a local server may
    need none)."""
    if env.get("OPENAI_API_KEY"):
        return "OPENAI_API_KEY"
    home = codex_home(env)
    if (home / "auth.json").is_file():
        return f"`codex login` ({home / 'auth.json'})"
    try:
        config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    provider = config.get("model_provider")
    if isinstance(provider, str) and provider != "openai":
        return f"the model provider '{provider}' of {home / 'config.toml'}"
    return None


OPENAI_API = "https://api.openai.com/v1"


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The address Codex sends its model requests to, as its config names
    it: the chosen provider's ``base_url`` in ``config.toml``, else
    ``OPENAI_BASE_URL`` or the OpenAI API for an API key; None when it
    cannot be told here (a ChatGPT login, a provider without a URL)."""
    try:
        config = tomllib.loads((codex_home(env) / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    provider = config.get("model_provider") or "openai"
    providers = config.get("model_providers")
    entry = providers.get(provider) if isinstance(providers, dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("base_url"), str):
        return str(entry["base_url"])
    if provider == "openai" and (env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL")):
        return env.get("OPENAI_BASE_URL") or OPENAI_API
    return None
