"""The person's text of a refused edit, kept under
``.pneuma/edits/conflicts/`` (never through a link: pneuma/core/state_files.py)."""

from __future__ import annotations

import itertools
import logging
import time
from pathlib import Path

from pneuma.core.state_files import STATE_DIR, write_state_bytes

log = logging.getLogger(__name__)
CONFLICTS_DIR = f"{STATE_DIR}/edits/conflicts"
_counter = itertools.count(1)


def conflict_name(rel: str) -> str:
    """A new file name for a kept version of ``rel``: when, a counter, and
    the path with its folders flattened."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    flat = rel.replace("/", "__")
    return f"{stamp}-{next(_counter)}-{flat}"


def keep_conflicting_text(workspace: Path, rel: str, data: bytes) -> str | None:
    """Write ``data`` to a new file under the conflicts folder; its
    workspace-relative path, or None when it could not be kept (a link
    planted there, a full disk: the person's text is still in their tab)."""
    kept = f"{CONFLICTS_DIR}/{conflict_name(rel)}"
    try:
        write_state_bytes(Path(workspace) / kept, data)
    except OSError as exc:
        log.warning("could not keep the person's version of %s: %s", rel, exc)
        return None
    return kept
