"""Two tabs exporting the same format at once each see their own export's
progress (GET /api/export/{format}/progress?id=ID, the id the page chose
for ``GET /api/export/{format}?progress=ID``); without an id, the format's
latest export, as before."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pneuma.host.exporters import ExportResult
from pneuma.server import routes_export


class HeldExporter:
    """Reports ``frames`` done out of 10, then waits until the test lets it end."""

    formats = [SimpleNamespace(name="mp4", label="MP4", suffix=".mp4")]

    def __init__(self) -> None:
        self.release = threading.Event()

    def run(self, workspace: Path, name: str, out: Any, params: dict[str, Any],
            progress: Any) -> ExportResult:
        frames = int(params["frames"])
        assert "progress" not in params  # the page's id is no option of the format
        progress(frames, 10, "frame")
        self.release.wait(20)
        target = workspace / "exports" / f"{frames}.mp4"
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(b"\x00\x00\x00\x18ftypmp42")
        return ExportResult(files=[target])


async def _progress(server: Any, query: str) -> dict[str, Any]:
    answer = await server.get(f"/api/export/mp4/progress{query}")
    assert answer.status == 200
    return dict(await answer.json())


async def test_two_exports_of_one_format_each_report_their_own_progress(make_server, monkeypatch):
    server = await make_server()
    exporter = HeldExporter()
    monkeypatch.setattr(routes_export, "_exporter", lambda pneuma: exporter)
    first = asyncio.ensure_future(server.get("/api/export/mp4?progress=tab-a&frames=3"))
    second = asyncio.ensure_future(server.get("/api/export/mp4?progress=tab-b&frames=7"))
    for _ in range(400):
        a, b = await _progress(server, "?id=tab-a"), await _progress(server, "?id=tab-b")
        if a.get("done") and b.get("done"):
            break
        await asyncio.sleep(0.025)
    assert (a["running"], a["done"], b["running"], b["done"]) == (True, 3, True, 7)
    assert (await _progress(server, "?id=tab-c"))["running"] is False
    exporter.release.set()
    answers = await asyncio.gather(first, second)
    assert [answer.status for answer in answers] == [200, 200]
    assert (await _progress(server, "?id=tab-a"))["running"] is False


async def test_an_export_without_an_id_is_followed_by_its_format(make_server, monkeypatch):
    server = await make_server()
    exporter = HeldExporter()
    monkeypatch.setattr(routes_export, "_exporter", lambda pneuma: exporter)
    running = asyncio.ensure_future(server.get("/api/export/mp4?frames=4"))
    for _ in range(400):
        state = await _progress(server, "")
        if state.get("done"):
            break
        await asyncio.sleep(0.025)
    assert (state["running"], state["done"], state["total"]) == (True, 4, 10)
    exporter.release.set()
    assert (await running).status == 200
