"""Items 9 and 10 under stress: exports of workspaces whose slides, pages
and documents carry scripts that never end (in four ways), and diagrams over
mermaid's limits or too heavy to lay out, through the Export menu's route.
Each export finishes within its bound, names every item it left out and
only those, answers no 5xx, and the server answers other requests within
2 s while it runs; a document's script never reaches the HTML export."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from pneuma.host.registry import get_mode
from pneuma.testing import serve
from pneuma.workspace.params import init_workspace
from tests.modes.test_export_hangs import (
    heavy_flowchart,
    too_many_arrows,
    too_much_text,
)
from tests.stress.tally import count, record

pytestmark = [pytest.mark.stress,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")]

PAGE_BUDGET_S = 2
# Ways a page's script never ends: while parsing, on load, after a timer, every frame.
LOOPS = [
    "<script>while (true) {}</script>",
    "<script>addEventListener('load', () => { for (;;) {} });</script>",
    "<script>setTimeout(() => { for (;;) {} }, 0);</script>",
    "<script>requestAnimationFrame(function spin() { const end = Date.now() + 1e9; "
    "while (Date.now() < end) {} });</script>",
]


async def _export_while_probing(server, fmt: str, tally: dict[str, float]) -> tuple[int, list[str], float]:
    """Run one export; meanwhile ask the server for the format list every
    0.2 s and keep the slowest answer."""
    started = time.monotonic()
    task = asyncio.create_task(server.get(f"/api/export/{fmt}"))
    while not task.done():
        asked = time.monotonic()
        probe = await server.get("/api/export")
        await probe.read()
        tally["slowest"] = max(tally["slowest"], time.monotonic() - asked)
        tally["probes"] += 1
        await asyncio.sleep(0.2)
    response = task.result()
    body = await response.read()
    took = time.monotonic() - started
    if response.status >= 500 and response.status != 504:
        tally["5xx"] += 1
    left = response.headers.get("X-Pneuma-Export-Left-Out")
    lines = json.loads(unquote(left)) if left else [json.loads(body)["error"]["message"]]
    return response.status, lines, took


def _judged(expected: set[str], named: dict[str, str]) -> tuple[bool, int]:
    """Whether the answer named wrongly (a hung page not named, or another
    page left out for a reason other than time), and how many ordinary pages
    were also left out for time: on a machine busy enough, an ordinary page
    can miss the short budget too, and then saying so is right."""
    extras = {name: line for name, line in named.items() if name not in expected}
    wrong = not expected <= named.keys() or any("did not finish" not in line for line in extras.values())
    return wrong, len(extras)


async def test_exports_leave_out_what_hangs_and_name_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PNEUMA_EXPORT_PAGE_TIMEOUT", str(PAGE_BUDGET_S))
    tally = {"slowest": 0.0, "probes": 0, "5xx": 0}
    exports = misnamed = overtime = slow_extras = 0

    deck = tmp_path / "deck"
    init_workspace(get_mode("slide"), deck)
    slides = json.loads((deck / "manifest.json").read_text())["slides"]
    # Two kinds in the deck, one on the site: each hung page costs its whole
    # budget, and the documents below carry all four kinds.
    looping = {2: LOOPS[1], 5: LOOPS[3]}
    for n, loop in looping.items():
        path = deck / slides[n - 1]["file"]
        path.write_text(path.read_text() + loop)
    async with serve("slide", deck, backend="none", watch=False) as server:
        # PNG only: the PPTX export renders slides the same way, and
        # tests/modes/test_export_hangs.py leaves a looping slide out of it.
        for fmt in ("png",):
            status, lines, took = await _export_while_probing(server, fmt, tally)
            exports += 1
            wrong, slow = _judged({str(n) for n in looping},
                                  {line.split()[1]: line for line in lines if line.startswith("slide ")})
            misnamed += status != 200 or wrong
            slow_extras += slow
            overtime += took > len(looping) * (PAGE_BUDGET_S + 1) + 30

    site = tmp_path / "site"
    init_workspace(get_mode("webcraft"), site)
    site_loops = LOOPS[2:3]  # it hangs at each of three widths
    for n, loop in enumerate(site_loops):
        (site / f"loop{n}.html").write_text(f"<!doctype html><title>loop</title><p>x</p>{loop}")
    async with serve("webcraft", site, backend="none", watch=False) as server:
        status, lines, took = await _export_while_probing(server, "png", tally)
        exports += 1
        wrong, slow = _judged({f"loop{n}.html" for n in range(len(site_loops))},
                              {line.split(" at ")[0]: line for line in lines})
        misnamed += status != 200 or wrong
        slow_extras += slow
        overtime += took > len(lines) * (PAGE_BUDGET_S + 1) + 40

    diagrams = tmp_path / "diagrams"
    init_workspace(get_mode("diagram"), diagrams)
    (diagrams / "heavy.mmd").write_text(heavy_flowchart(3000))
    (diagrams / "arrows.mmd").write_text(too_many_arrows())
    (diagrams / "text.mmd").write_text(too_much_text())
    async with serve("diagram", diagrams, backend="none", watch=False) as server:
        for fmt in ("svg", "png"):
            status, lines, took = await _export_while_probing(server, fmt, tally)
            exports += 1
            wrong, slow = _judged({"arrows.mmd", "heavy.mmd", "text.mmd"},
                                  {line.split(":")[0]: line for line in lines})
            misnamed += status != 200 or wrong
            slow_extras += slow
            misnamed += any("mermaid.initialize" in line for line in lines)
            overtime += took > PAGE_BUDGET_S + 30

    docs = tmp_path / "docs"
    init_workspace(get_mode("doc"), docs)
    for n, loop in enumerate(LOOPS):
        (docs / f"notes{n}.md").write_text(f"# Notes {n}\n\n{loop}\n")
    scripts_kept = 0
    async with serve("doc", docs, backend="none", watch=False) as server:
        for fmt in ("html", "pdf"):
            status, _lines, took = await _export_while_probing(server, fmt, tally)
            exports += 1
            misnamed += status != 200
            overtime += took > 30
        scripts_kept = sum("<script" in p.read_text() for p in (docs / "exports").glob("*.html"))

    record("23.9 export hangs", f"{exports} exports of workspaces with {len(LOOPS)} kinds of never-ending script and 3 "
                f"diagrams over a limit: {misnamed} answers that missed or misnamed what was left out, "
                f"{overtime} over their bound, {int(tally['5xx'])} 5xx, {slow_extras} ordinary pages also left out "
                f"for time on a busy machine; {count(int(tally['probes']))} "
                f"requests meanwhile, the slowest {tally['slowest']:.2f} s")
    record("23.10 export scripts", f"doc exports of {len(LOOPS)} documents with scripts: {scripts_kept} HTML files kept one")
    assert (misnamed, overtime, tally["5xx"], scripts_kept) == (0, 0, 0, 0)
    assert tally["slowest"] < 2.0
