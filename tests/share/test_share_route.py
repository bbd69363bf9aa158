"""GET /api/share/file, the Export menu's "Share as file", answered by a real
server: a fresh session's files, and the error model's answer for a
conversation the workspace does not have."""

from __future__ import annotations

from pathlib import Path

from pneuma.share.model import parse_share_html
from pneuma.testing.server import serve


async def test_a_fresh_session_shares_its_files_and_a_wrong_conversation_is_a_404(
        tmp_path: Path) -> None:
    async with serve("doc", tmp_path / "notes", backend="none") as server:
        response = await server.get("/api/share/file")
        assert response.status == 200, await response.text()
        assert response.headers["X-Pneuma-Export-Path"] == "exports/notes-share.html"
        html = await response.text()
        assert server.token not in html
        data = parse_share_html(html)
        assert data.mode == "doc" and data.turns == []
        assert any(path.endswith(".md") for path in data.files_at())

        wrong = await server.get("/api/share/file?conversation=not-one")
        assert wrong.status == 404
        error = (await wrong.json())["error"]
        assert error["code"] == "E_NOT_FOUND" and "not-one" in error["message"]
        assert str(tmp_path) not in error["message"]
