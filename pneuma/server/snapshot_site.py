"""A checkpoint's pages on the content site (pneuma/server/content_site.py),
for "Compare" and the timeline of a mode whose viewer frames its pages from
that site (webcraft): docs/checkpoints.md, "Compare and the timeline".

``/__pneuma__/snapshot/{ref}/{side}/{path}`` is the file ``path`` of the
workspace as checkpoint ``ref`` kept it (``side``: ``before`` or ``after``
the turn), read from the checkpoint store by the snapshot code of
routes_snapshot.py (``resolve_state``, ``State.read``): nothing is restored,
and only the state's own files exist there. A page's relative URLs (its
stylesheets, scripts, images, ``fetch``es) resolve under the same prefix, so
the whole page is the checkpoint's. The site answers it exactly as it
answers a live page: behind the same guard (its own token, Host, Origin,
reads only), with the same headers and the mode's script in HTML, and the
hidden files hidden.
"""

from __future__ import annotations

from pneuma.checkpoints import Checkpoints
from pneuma.core.errors import ToolError
from pneuma.server.routes_snapshot import resolve_state

SNAPSHOT_PREFIX = "__pneuma__/snapshot/"


def split_snapshot_path(rest: str) -> tuple[str, str, str]:
    """``{ref}/{side}/{path}`` (what follows the prefix) as its three parts;
    the path may be empty (the state's root page)."""
    parts = rest.split("/", 2)
    if len(parts) < 3 or not parts[0] or not parts[1]:
        raise ToolError("E_NOT_FOUND", f"no file {SNAPSHOT_PREFIX}{rest}: a checkpoint's file "
                        f"is {SNAPSHOT_PREFIX}{{ref}}/{{before|after}}/{{path}}",
                        details={"path": rest})
    return parts[0], parts[1], parts[2]


def read_snapshot_file(store: Checkpoints, ref: str, side: str, rel: str) -> bytes | None:
    """The bytes of ``rel`` in that side of checkpoint ``ref``; None when
    ``rel`` is a folder of it (a page's URL without its slash). Raises
    ``ToolError`` as routes_snapshot.py does (E_NOT_FOUND, E_BAD_ARGS, ...)."""
    state = resolve_state(store, ref, side)
    if rel not in state.files:
        inside = rel.rstrip("/") + "/"
        if any(path.startswith(inside) for path in state.files):
            return None
    return state.read(store, rel)
