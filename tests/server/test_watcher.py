"""The file watcher: workspace changes become ``content_update`` broadcasts."""

from __future__ import annotations

import asyncio

import pytest

WAIT = 2.0  # generous: these tests check what arrives, not how fast


def updates_for(tab, path):
    return [f for m in tab.received if m["type"] == "content_update"
            for f in m["files"] if f["path"] == path]


async def wait_file(tab, path, where=lambda f: True):
    """The next content_update entry for ``path`` (matching ``where``)."""
    message = await tab.wait_for(
        "content_update", WAIT,
        where=lambda m: any(f["path"] == path and where(f) for f in m["files"]))
    assert isinstance(message["seq"], int)
    return next(f for f in message["files"] if f["path"] == path and where(f))


@pytest.fixture
async def watched(make_server):
    server = await make_server(watch=True)
    tab = await server.tab()
    return server, tab


async def test_an_external_write_is_reported_with_its_content(watched):
    server, tab = watched
    text = "<section><h1>Edited outside ✓</h1></section>\n"
    (server.workspace / "slides" / "02-problem.html").write_text(text, encoding="utf-8")
    entry = await wait_file(tab, "slides/02-problem.html", lambda f: f.get("content") == text)
    assert entry["origin"] == "external"
    assert not entry.get("deleted")
    # A new file in a new directory is reported too.
    (server.workspace / "slides" / "part2").mkdir()
    (server.workspace / "slides" / "part2" / "01-x.html").write_text("<p>x</p>")
    entry = await wait_file(tab, "slides/part2/01-x.html")
    assert entry["content"] == "<p>x</p>" and entry["origin"] == "external"


async def test_a_write_through_the_api_is_self(watched):
    server, tab = watched
    response = await server.post("/api/files", json={"path": "theme.css",
                                                     "content": ":root{--a:1}"})
    assert response.status == 200
    entry = await wait_file(tab, "theme.css", lambda f: f.get("content") == ":root{--a:1}")
    assert entry["origin"] == "self"
    # Every report for it says self: the temp file of the atomic write is
    # not reported as a file of its own either.
    await tab.drain(0.2)
    assert {f["origin"] for f in updates_for(tab, "theme.css")} == {"self"}
    reported = {f["path"] for m in tab.received if m["type"] == "content_update"
                for f in m["files"]}
    assert reported == {"theme.css"}, reported


async def test_delete_is_reported(watched):
    server, tab = watched
    (server.workspace / "slides" / "03-point.html").unlink()
    entry = await wait_file(tab, "slides/03-point.html", lambda f: f.get("deleted"))
    assert entry["deleted"] is True
    assert entry.get("content") is None
    response = await server.delete("/api/files", params={"path": "slides/04-loop.html"})
    assert response.status == 200
    entry = await wait_file(tab, "slides/04-loop.html", lambda f: f.get("deleted"))
    assert entry["origin"] == "self"


async def test_a_binary_file_comes_without_content(watched):
    server, tab = watched
    (server.workspace / "assets" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    entry = await wait_file(tab, "assets/photo.png")
    assert entry.get("content") is None
    assert entry["binary"] is True
    assert not entry.get("deleted")


async def test_ignored_and_bookkeeping_files_are_never_reported(watched):
    server, tab = watched
    ws = server.workspace
    (ws / "exports").mkdir()
    (ws / "exports" / "deck.html").write_text("ignorePatterns")
    (ws / "CLAUDE.md").write_text("# changed")
    (ws / ".claude" / "x").mkdir(parents=True, exist_ok=True)
    (ws / ".claude" / "x" / "SKILL.md").write_text("changed")
    (ws / ".pneuma" / "notes.json").write_text("{}")
    (ws / "slides" / "node_modules").mkdir()
    (ws / "slides" / "node_modules" / "a.html").write_text("x")
    (ws / "notes.txt").write_text("not a watched pattern")
    # A marker written last: once its update arrives, the others had their chance.
    (ws / "theme.css").write_text("/* marker */")
    await wait_file(tab, "theme.css", lambda f: f.get("content") == "/* marker */")
    await tab.drain(0.1)
    reported = {f["path"] for m in tab.received if m["type"] == "content_update"
                for f in m["files"]}
    assert reported == {"theme.css"}, reported


async def test_brace_globs_and_the_modes_ignore_patterns(make_server, add_mode,
                                                        minimal_manifest):
    manifest = minimal_manifest("globs")
    manifest["viewer"] = {
        "watchPatterns": ["*.md", "{pages,parts}/**/*.{html,css}"],
        "ignorePatterns": ["pages/drafts/**", "**/*.draft.{html,css}"],
    }
    server = await make_server(mode=add_mode(manifest), watch=True)
    tab = await server.tab()
    ws = server.workspace
    files = {
        "pages/a.html": True, "parts/b/c.css": True, "pages/x.js": False,
        "other/a.html": False, "pages/drafts/d.html": False, "parts/e.draft.css": False,
        "notes/deep.md": False,
    }
    for rel in files:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(rel)
    (ws / "zz-marker.md").write_text("marker")
    await wait_file(tab, "zz-marker.md")
    for rel, wanted in files.items():
        if wanted and not updates_for(tab, rel):
            await wait_file(tab, rel)
    await tab.drain(0.1)
    reported = {f["path"] for m in tab.received if m["type"] == "content_update"
                for f in m["files"]}
    assert reported == {rel for rel, wanted in files.items() if wanted} | {"zz-marker.md"}
    # GET /api/files applies the same filter.
    response = await server.get("/api/files")
    listed = {f["path"] for f in (await response.json())["files"]}
    assert listed == {"welcome.md", "pages/a.html", "parts/b/c.css", "zz-marker.md"}


async def test_the_api_writes_temp_file_is_never_reported(make_server, add_mode,
                                                         minimal_manifest):
    """With a watch-everything mode, the atomic write's temp file must not
    show up as a file (or a deleted file) of its own."""
    server = await make_server(mode=add_mode(minimal_manifest("everything")), watch=True)
    tab = await server.tab()
    for i in range(3):
        response = await server.post("/api/files", json={"path": "notes/a.md",
                                                         "content": f"v{i}"})
        assert response.status == 200
    await wait_file(tab, "notes/a.md", lambda f: f.get("content") == "v2")
    await tab.drain(0.2)
    reported = {f["path"] for m in tab.received if m["type"] == "content_update"
                for f in m["files"]}
    assert reported == {"notes/a.md"}, reported


async def test_files_written_right_after_mkdir_are_reported(watched):
    """``mkdir -p`` then write at once (what an agent does): the new
    directory is not watched yet when the file lands, so the watcher must
    look inside new directories itself."""
    server, tab = watched
    expected = set()
    for i in range(15):
        directory = server.workspace / "slides" / f"part{i}" / "deep"
        directory.mkdir(parents=True)
        (directory / "01.html").write_text(f"<p>{i}</p>")
        expected.add(f"slides/part{i}/deep/01.html")
        await asyncio.sleep(0.02)  # each its own race with the watcher
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while loop.time() < deadline and not all(updates_for(tab, rel) for rel in expected):
        try:
            await tab.recv(deadline - loop.time())
        except asyncio.TimeoutError:
            break
    missing = sorted(rel for rel in expected if not updates_for(tab, rel))
    assert missing == []
    for rel in expected:
        assert updates_for(tab, rel)[-1]["content"] == f"<p>{rel.split('/')[1][4:]}</p>"


async def test_a_new_directory_is_scanned_even_when_its_file_events_were_missed(
        tmp_path, monkeypatch):
    """The same race made deterministic: the OS reports only the new
    directory (its file was written before the watch was added)."""
    from pneuma.server import watcher
    from pneuma.server.watcher import FileFilter, SelfWrites, watch_workspace

    root = tmp_path / "ws"
    (root / "slides" / "new" / "deep").mkdir(parents=True)
    (root / "slides" / "new" / "deep" / "a.html").write_text("<p>a</p>")
    (root / "slides" / "new" / "b.txt").write_text("not watched")
    (root / "slides" / "new" / "node_modules").mkdir()
    (root / "slides" / "new" / "node_modules" / "c.html").write_text("never")
    stop = asyncio.Event()

    class OneBatch:
        """The OS's report: only the two new folders, then the stop."""

        def __init__(self, folders: list[str]) -> None:
            self.sent = False

        def watch(self, *args: object) -> object:
            if stop.is_set():
                return "stop"
            if self.sent:
                stop.set()
                return "stop"
            self.sent = True
            return {(1, str(root / "slides" / "new")),
                    (1, str(root / "slides" / "new" / "deep"))}

        def close(self) -> None:
            pass

    monkeypatch.setattr(watcher, "open_folder_watch", OneBatch)
    published: list[dict] = []
    await watch_workspace(root, FileFilter(["slides/**/*.html"], []), SelfWrites(),
                          published.extend, stop)
    assert published == [{"path": "slides/new/deep/a.html", "origin": "external",
                          "content": "<p>a</p>"}]


async def test_a_modes_own_text_suffix_arrives_as_text(tmp_path):
    """manifest viewer.textSuffixes: the diagram mode's .mmd reaches the
    viewer with its content; a suffix nobody declared stays binary."""
    from pneuma.server.watcher import FileFilter, SelfWrites, watch_workspace

    root = tmp_path / "ws"
    root.mkdir()
    published: list[dict] = []
    stop = asyncio.Event()
    task = asyncio.create_task(watch_workspace(
        root, FileFilter(["**/*.{mmd,xyz}"], [], [".MMD"]), SelfWrites(), published.extend, stop))
    await asyncio.sleep(0.5)
    (root / "flow.mmd").write_text("flowchart TD\n  A --> B\n")
    (root / "data.xyz").write_text("text, but undeclared")
    for _ in range(100):
        if {f["path"] for f in published} >= {"flow.mmd", "data.xyz"}:
            break
        await asyncio.sleep(0.05)
    stop.set()
    await task
    by_path = {f["path"]: f for f in published}
    assert by_path["flow.mmd"]["content"] == "flowchart TD\n  A --> B\n"
    assert by_path["data.xyz"]["content"] is None and by_path["data.xyz"]["binary"] is True
