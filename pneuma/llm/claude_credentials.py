"""Whether Claude Code could authenticate here: the same look serves the
Claude Code backend's start-up check and the ACP presets that run Claude
Code through an adapter (``pneuma.api.claude_credentials_found``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

CREDENTIAL_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                  "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")


def credentials_found(env: Mapping[str, str]) -> bool:
    """A cheap look for anything Claude Code could authenticate with: a
    credential variable, a `claude login` file, an apiKeyHelper setting.
    False only when none is there (the first turn would fail)."""
    if any(env.get(name) for name in CREDENTIAL_ENV):
        return True
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    config_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    if (config_dir / ".credentials.json").is_file():
        return True
    for settings in (config_dir / "settings.json", home / ".claude.json",
                     config_dir / ".claude.json"):
        try:
            text = settings.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "apiKeyHelper" in text or "primaryApiKey" in text:
            return True
    return sys.platform == "darwin"  # the login lives in the keychain there: cannot tell
