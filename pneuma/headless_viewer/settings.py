"""How the headless viewer runs: its Chromium, idle time and memory bound,
each from the environment so that `pneuma run` and its tests can set them."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from pneuma.tools.chromium import CHROMIUM

DEFAULT_IDLE_S = 120.0
DEFAULT_MAX_RSS_MB = 1024
START_TIMEOUT_S = 30.0
VIEWPORT_WIDTH, VIEWPORT_HEIGHT = 1280, 800

# Kept small: one page, no audio, no extensions, a bounded JavaScript heap,
# and /tmp instead of /dev/shm (a container's /dev/shm is often 64 MiB).
MEMORY_ARGS = [
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--mute-audio",
    "--js-flags=--max-old-space-size=512",
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
]


def _number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


@dataclass
class Settings:
    chromium: str | None
    """The Chromium binary, or None when none was found."""
    idle_s: float = DEFAULT_IDLE_S
    """Closed after this long without an action."""
    max_rss_bytes: int = DEFAULT_MAX_RSS_MB << 20
    """Restarted (after its answer) when its processes hold more than this."""
    start_timeout_s: float = START_TIMEOUT_S
    enabled: bool = True

    @classmethod
    def from_environment(cls) -> Settings:
        """``PNEUMA_HEADLESS_VIEWER=0`` turns it off; ``PNEUMA_HEADLESS_CHROMIUM``
        names the binary; ``PNEUMA_HEADLESS_IDLE_S`` and
        ``PNEUMA_HEADLESS_MAX_RSS_MB`` set the bounds."""
        named = os.environ.get("PNEUMA_HEADLESS_CHROMIUM")
        return cls(
            chromium=named if named else find_chromium(),
            idle_s=_number("PNEUMA_HEADLESS_IDLE_S", DEFAULT_IDLE_S),
            max_rss_bytes=int(_number("PNEUMA_HEADLESS_MAX_RSS_MB", DEFAULT_MAX_RSS_MB)) << 20,
            enabled=os.environ.get("PNEUMA_HEADLESS_VIEWER", "1") != "0",
        )


def find_chromium() -> str | None:
    """The host's Chromium (pneuma.tools.chromium), else one on PATH."""
    if Path(CHROMIUM).exists():
        return CHROMIUM
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
