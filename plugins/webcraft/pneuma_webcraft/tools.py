"""The agent's ``capture_screenshot`` tool: a page rendered at a viewport
width in headless Chromium, saved as a PNG in the workspace for the agent to
look at (the viewer's frame is sandboxed and cannot be painted to a PNG)."""

from __future__ import annotations

import re
import struct
import tempfile
from pathlib import Path
from typing import Any

from pneuma.api import ToolContext, ToolError, atomic_write_bytes, write_state_bytes

from .render import screenshot_pages
from .site import copy_site, viewport_size


async def capture_screenshot(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    page = ctx.sandbox.normalize(args["page"])
    viewport = args.get("viewport", "desktop")
    viewport_size(viewport)
    stem = re.sub(r"\.html?$", "", page, flags=re.IGNORECASE).replace("/", "_")
    if "output" in args:
        output_rel = ctx.sandbox.normalize(args["output"])
        if not output_rel.lower().endswith(".png"):
            raise ToolError("E_BAD_ARGS", f"output {output_rel!r} must end in .png", hint="e.g. shots/home.png")
        target = ctx.sandbox.resolve_writable(output_rel)
    else:
        # .pneuma/ is closed to the agent's file tools but is where captures
        # live (as the shell's ctx.saveCapture keeps them); the name is built
        # from the normalised page, so it stays inside that folder.
        output_rel = f".pneuma/captures/{stem}-{viewport}.png"
        target = ctx.workspace / output_rel
    with tempfile.TemporaryDirectory(prefix="pneuma-webcraft-") as tmp:
        root = Path(tmp)
        pages = copy_site(ctx.workspace, root)
        if page not in pages:
            raise ToolError("E_NOT_FOUND", f"no page {page!r} in the site",
                            details={"pages": pages}, hint="pass one of the listed pages")
        shot_file = root / ".shot.png"
        try:
            shots, left_out = await screenshot_pages(root, [(page, viewport, shot_file)])
        except ImportError as error:
            raise ToolError("E_INTERNAL", f"screenshots need the playwright package ({error})") from error
        if left_out:  # its script never ended: said, not a missing file
            raise ToolError("E_TIMEOUT", left_out[0], details={"page": page, "viewport": viewport},
                            hint="fix the page's script (a loop that never ends), then capture again")
        data = shot_file.read_bytes()
    if "output" in args:
        atomic_write_bytes(target, data)
    else:
        write_state_bytes(target, data, None)  # never through a link under .pneuma/
    width, height = struct.unpack(">II", data[16:24])
    return {"path": output_rel, "width": width, "height": height, "viewport": shots[0].viewport}
