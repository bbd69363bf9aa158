"""The slide mode's check after every turn (docs/checks.md): no slide the
turn changed overflows the canvas.

It is the fit check the agent runs itself (the viewer's ``checkContentFit``
action, measured on the rendered slide: skill/SKILL.md, "Fitting content
on the slide"), run in the person's tab or, with none open, in the
headless viewer. A turn that changed ``theme.css`` or ``manifest.json``
changes every slide: the whole deck is measured then.
"""

from __future__ import annotations

import json
from typing import Any

from pneuma.api import CheckRequest, Problem, TurnCheck

WHOLE_DECK = ("theme.css", "manifest.json")
MAX_MANIFEST_BYTES = 1024 * 1024


def _deck_files(request: CheckRequest) -> list[str]:
    try:
        data = json.loads((request.workspace / "manifest.json").read_bytes()[:MAX_MANIFEST_BYTES])
    except (OSError, ValueError):
        return []
    slides = data.get("slides") if isinstance(data, dict) else None
    return [s["file"] for s in slides or [] if isinstance(s, dict) and isinstance(s.get("file"), str)]


def _slides_to_measure(request: CheckRequest) -> list[str] | None:
    """The changed slides in the deck, or None for the whole deck."""
    deck = _deck_files(request)
    if not deck:
        return []
    if any(path in WHOLE_DECK for path in request.changed):
        return None
    changed = set(request.changed)
    return [f for f in deck if f in changed]


def _problem(slide: dict[str, Any]) -> Problem | None:
    file = str(slide.get("file") or "")
    index = slide.get("index")
    locate = {"file": file}
    if slide.get("missing"):
        return Problem(f"slide {index} ({file}) is listed in manifest.json but the file does not exist",
                       file="manifest.json", locate=locate)
    if slide.get("fits", True):
        return None
    where = []
    if slide.get("overflowY"):
        where.append(f"{slide['overflowY']}px vertically")
    if slide.get("overflowX"):
        where.append(f"{slide['overflowX']}px horizontally")
    elements = "; ".join(str(e.get("selector")) for e in (slide.get("elements") or [])[:3]
                         if isinstance(e, dict))
    message = f"slide {index} overflows the canvas by {' and '.join(where) or 'some pixels'}"
    if elements:
        message += f": {elements}"
    return Problem(message, file=file, locate=locate)


def content_fits(request: CheckRequest) -> list[Problem]:
    slides = _slides_to_measure(request)
    if slides == [] or request.page is None:
        return []
    params = {} if slides is None else {"slides": slides}
    answer = request.page.viewer_action("checkContentFit", params,
                                        timeout=max(1.0, request.budget_s - 2))
    if not answer.get("success"):
        raise RuntimeError(f"the fit check could not run: {answer.get('message') or 'no answer'}")
    measured = (answer.get("data") or {}).get("slides") or []
    problems = [p for p in (_problem(s) for s in measured if isinstance(s, dict)) if p]
    for slide in measured:
        for asset in (slide.get("missingAssets") or []) if isinstance(slide, dict) else []:
            problems.append(Problem(f"slide {slide.get('index')} refers to {asset}, which does not exist",
                                    file=str(slide.get("file")), severity="warning",
                                    locate={"file": str(slide.get("file"))}))
    return problems


CHECKS = [TurnCheck(mode="slide", name="overflow",
                    label={"en": "Content fits the slides", "zh-CN": "内容不溢出幻灯片"},
                    run=content_fits, needs_page=True)]
