"""Workspace files over HTTP, all through the one sandbox."""

from __future__ import annotations

import base64
import json
import os

import pytest
from yarl import URL

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + bytes(range(256)) + b"\x00\xff" * 8


def _walk(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


async def test_list_files_gives_the_watched_files_with_content(server):
    ws = server.workspace
    (ws / "assets" / "logo.png").write_bytes(PNG)
    (ws / "exports").mkdir()
    (ws / "exports" / "deck.html").write_text("<p>export</p>")
    (ws / "notes.txt").write_text("not watched by the slide viewer")
    response = await server.get("/api/files")
    assert response.status == 200
    files = {f["path"]: f for f in (await response.json())["files"]}
    on_disk_manifest = (ws / "manifest.json").read_text(encoding="utf-8")
    assert files["manifest.json"]["content"] == on_disk_manifest
    assert files["theme.css"]["content"] == (ws / "theme.css").read_text(encoding="utf-8")
    slides = json.loads(on_disk_manifest)
    assert slides  # the seeded deck
    assert "slides/01-title.html" in files
    assert files["slides/01-title.html"]["content"].lstrip().startswith("<")
    logo = files["assets/logo.png"]
    assert logo.get("content") is None and logo["binary"] is True
    assert logo["size"] == len(PNG)
    # Not watched, ignored, or Pneuma's own bookkeeping.
    for path in files:
        assert not path.startswith(("exports/", ".pneuma/", ".claude/")), path
        assert path not in ("notes.txt", "CLAUDE.md")


async def test_read_a_file(server):
    response = await server.get("/api/files/read", params={"path": "theme.css"})
    assert response.status == 200
    body = await response.json()
    assert body["path"] == "theme.css"
    assert body["content"] == (server.workspace / "theme.css").read_text(encoding="utf-8")
    # A ./ prefix and doubled slashes are the same file.
    response = await server.get("/api/files/read", params={"path": "./slides//01-title.html"})
    assert response.status == 200
    assert (await response.json())["path"] == "slides/01-title.html"


async def test_read_a_missing_file_is_404(server):
    response = await server.get("/api/files/read", params={"path": "slides/99-none.html"})
    assert response.status == 404
    assert (await response.json())["error"]["code"] == "E_NOT_FOUND"
    response = await server.get("/api/files/read")
    assert response.status == 400


@pytest.fixture
def escapes(server, tmp_path):
    """Paths that must never be readable, with what they point at created."""
    ws = server.workspace
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the workspace")
    (ws / ".git").mkdir(exist_ok=True)
    (ws / ".git" / "config").write_text("[core]")
    (ws / ".env").write_text("API_KEY=1")
    (ws / ".env.local").write_text("API_KEY=2")
    (ws / "node_modules" / "x").mkdir(parents=True)
    (ws / "node_modules" / "x" / "index.js").write_text("//")
    os.symlink(secret, ws / "link-out.txt")
    os.symlink(tmp_path, ws / "dir-out")
    os.symlink(ws / ".git", ws / "gitlink")
    os.symlink(ws / ".env", ws / "envlink")
    return [
        "../secret.txt", "slides/../../secret.txt", "..", "/etc/passwd", str(secret),
        "C:/Windows/win.ini", ".git/config", "slides/../.git/config", ".env", ".env.local",
        "node_modules/x/index.js", ".pneuma/config.toml", "link-out.txt", "dir-out/secret.txt",
        "gitlink/config", "envlink", "slides\\01-title.html", "..\\secret.txt",
    ]


async def test_read_refuses_every_escape(server, escapes):
    for path in escapes:
        response = await server.get("/api/files/read", params={"path": path})
        assert response.status == 403, (path, response.status)
        body = await response.json()
        assert body["error"]["code"] == "E_DENY_PATH", path
        assert "secret" not in body["error"].get("content", "")


async def test_nul_and_control_characters_are_refused(server):
    for raw in ("theme.css%00.png", "theme%00", "slides%2F01-title.html%0A"):
        url = URL(f"/api/files/read?path={raw}", encoded=True)
        response = await server.get(url)
        assert response.status == 403, raw
        assert (await response.json())["error"]["code"] == "E_DENY_PATH"


async def test_content_route_refuses_escapes(server, escapes):
    for path in ("link-out.txt", "dir-out/secret.txt", "gitlink/config", ".git/config",
                 ".env", "envlink", ".pneuma/config.toml"):
        response = await server.get(f"/content/{path}")
        assert response.status == 403, path
    for raw in ("%2e%2e/secret.txt", "slides/%2e%2e/%2e%2e/secret.txt", "..%2Fsecret.txt",
                "theme.css%00"):
        response = await server.get(URL(f"/content/{raw}", encoded=True))
        assert response.status in (403, 404), raw
        assert b"outside the workspace" not in await response.read()


async def test_write_refuses_escapes_and_touches_nothing(server, escapes, tmp_path):
    before = (tmp_path / "secret.txt").read_text()
    for path in escapes:
        response = await server.post("/api/files", json={"path": path, "content": "pwned"})
        assert response.status == 403, path
    assert (tmp_path / "secret.txt").read_text() == before
    assert (server.workspace / ".git" / "config").read_text() == "[core]"
    assert not (server.workspace / ".pneuma" / "config.toml").read_text().startswith("pwned")


async def test_tree_leaves_out_forbidden_dirs_and_outside_links(server, escapes):
    (server.workspace / ".claude").mkdir(exist_ok=True)
    (server.workspace / ".claude" / "settings.json").write_text("{}")
    response = await server.get("/api/files/tree")
    assert response.status == 200
    tree = await response.json()
    paths = []

    def collect(entries):
        for entry in entries:
            paths.append(entry["path"])
            collect(entry.get("children", []))

    collect(tree["children"])
    assert "manifest.json" in paths
    assert "slides/01-title.html" in paths
    for path in paths:
        first = path.split("/")[0]
        assert first not in (".git", ".pneuma", "node_modules", ".claude", "dir-out"), path
        assert not first.startswith(".env"), path
    assert "link-out.txt" not in paths


async def test_write_text_then_read_it_back(server):
    text = "<section><h1>Ünïcode ✓</h1></section>\n"
    response = await server.post("/api/files",
                                 json={"path": "slides/09-new.html", "content": text})
    assert response.status == 200
    assert (await response.json()) == {"ok": True, "path": "slides/09-new.html",
                                       "size": len(text.encode())}
    assert (server.workspace / "slides" / "09-new.html").read_bytes() == text.encode()
    # New directories are created.
    response = await server.post("/api/files", json={"path": "assets/deep/a/b.css",
                                                     "content": ""})
    assert response.status == 200
    assert (server.workspace / "assets/deep/a/b.css").read_bytes() == b""


async def test_write_binary_as_data_url_is_byte_exact(server):
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    response = await server.post("/api/files", json={"path": "assets/img.png", "content": url})
    assert response.status == 200
    assert (server.workspace / "assets" / "img.png").read_bytes() == PNG
    # A non-base64 data URL is percent-decoded.
    response = await server.post("/api/files", json={"path": "assets/a.txt",
                                                     "content": "data:text/plain,a%20b%00c"})
    assert response.status == 200
    assert (server.workspace / "assets" / "a.txt").read_bytes() == b"a b\x00c"
    response = await server.post("/api/files", json={"path": "assets/bad.png",
                                                     "content": "data:image/png;base64,@@@"})
    assert response.status == 400
    assert not (server.workspace / "assets" / "bad.png").exists()


async def test_write_is_atomic_and_leaves_no_temp_files(server):
    target = server.workspace / "theme.css"
    mode = target.stat().st_mode
    for i in range(20):
        response = await server.post("/api/files", json={"path": "theme.css",
                                                         "content": f":root {{--i: {i}}}"})
        assert response.status == 200
    assert target.read_text() == ":root {--i: 19}"
    assert target.stat().st_mode == mode  # permissions kept
    leftovers = [p for p in _walk(server.workspace) if "tmp" in p.rsplit("/", 1)[-1]]
    assert leftovers == []


async def test_write_replaces_instead_of_writing_through(server):
    """A reader holding the old file never sees a half-written new one: the
    write goes to a new inode that replaces the old one."""
    target = server.workspace / "theme.css"
    inode = target.stat().st_ino
    response = await server.post("/api/files", json={"path": "theme.css", "content": "x"})
    assert response.status == 200
    assert target.stat().st_ino != inode


@pytest.mark.parametrize("body, status", [
    ("{not json", 400),
    ("[1, 2]", 400),
    (json.dumps({"content": "x"}), 400),
    (json.dumps({"path": "a.html"}), 400),
    (json.dumps({"path": "a.html", "content": 5}), 400),
    (json.dumps({"path": "a.html", "content": None}), 400),
    (json.dumps({"path": "a.html", "content": ["x"]}), 400),
    (json.dumps({"path": 7, "content": "x"}), 400),
    (json.dumps({"path": "", "content": "x"}), 400),
    (json.dumps({"path": "slides", "content": "x"}), 400),
])
async def test_write_bad_input_is_a_clear_400(server, body, status):
    response = await server.post("/api/files", data=body,
                                 headers={"Content-Type": "application/json"})
    assert response.status == status, body
    error = (await response.json())["error"]
    assert error["code"] == "E_BAD_ARGS"
    assert error["message"]
    assert not (server.workspace / "a.html").exists()


async def test_delete(server):
    target = server.workspace / "slides" / "03-point.html"
    assert target.exists()
    response = await server.delete("/api/files", params={"path": "slides/03-point.html"})
    assert response.status == 200
    assert (await response.json())["deleted"] is True
    assert not target.exists()
    response = await server.delete("/api/files", params={"path": "slides/03-point.html"})
    assert response.status == 404
    response = await server.delete("/api/files")
    assert response.status == 400
    response = await server.delete("/api/files", params={"path": "slides"})
    assert response.status == 404
    assert (server.workspace / "slides").is_dir()


async def test_delete_refuses_escapes(server, escapes, tmp_path):
    for path in escapes:
        response = await server.delete("/api/files", params={"path": path})
        assert response.status == 403, path
    assert (tmp_path / "secret.txt").exists()
    assert (server.workspace / ".env").exists()


async def test_content_serves_exact_bytes_with_range(server):
    (server.workspace / "assets" / "logo.png").write_bytes(PNG)
    response = await server.get("/content/assets/logo.png")
    assert response.status == 200
    assert await response.read() == PNG
    response = await server.get("/content/assets/logo.png", headers={"Range": "bytes=16-31"})
    assert response.status == 206
    assert await response.read() == PNG[16:32]
    assert response.headers["Content-Range"] == f"bytes 16-31/{len(PNG)}"
    response = await server.get("/content/assets/logo.png", headers={"Range": "bytes=-4"})
    assert response.status == 206
    assert await response.read() == PNG[-4:]
    response = await server.get("/content/assets/logo.png",
                                headers={"Range": f"bytes={len(PNG) + 10}-"})
    assert response.status == 416


async def test_content_404s(server):
    for path in ("/content/nothing.html", "/content/slides", "/content/slides/"):
        response = await server.get(path)
        assert response.status == 404, path
