"""The folder publisher: the files copied into the person's folder; a
second publish replaces what the first put there and removes what the
folder to publish no longer has, and never touches a file it did not put
there or one changed since."""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma.api import PublishError, PublishRequest
from pneuma.publish.folder import MANIFEST, publish_to_folder


def _site(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != MANIFEST}


def _publish(site: Path, out: Path):
    return publish_to_folder(PublishRequest(site, {"name": "www", "kind": "folder",
                                                   "path": str(out)}, "m"))


def test_the_files_land_in_the_folder_and_again_changes_nothing(tmp_path):
    site = _site(tmp_path / "site", {"index.html": "<h1>Hi</h1>", "css/a.css": "h1{}"})
    out = tmp_path / "www"
    first = _publish(site, out)
    assert first.changed and _files(out) == {"index.html": "<h1>Hi</h1>", "css/a.css": "h1{}"}
    assert first.url == out.as_uri() + "/"
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    again = _publish(site, out)
    assert not again.changed and "nothing changed" in again.summary
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == before


def test_a_later_publish_replaces_its_own_files_and_keeps_the_persons(tmp_path):
    out = _site(tmp_path / "www", {"notes.txt": "mine", "keep/mine.css": "x{}"})
    site = _site(tmp_path / "site", {"index.html": "one", "old/page.html": "old"})
    _publish(site, out)
    (site / "old" / "page.html").unlink()
    (site / "index.html").write_text("two")
    second = _publish(site, out)
    assert second.changed
    assert _files(out) == {"index.html": "two", "notes.txt": "mine", "keep/mine.css": "x{}"}
    assert not (out / "old").exists()  # the folder it made, emptied, goes too


def test_a_file_in_the_way_stops_the_publish_before_anything_is_written(tmp_path):
    out = _site(tmp_path / "www", {"index.html": "the person's own page"})
    site = _site(tmp_path / "site", {"index.html": "published", "about.html": "about"})
    with pytest.raises(PublishError) as caught:
        _publish(site, out)
    assert "index.html" in str(caught.value) and caught.value.hint
    assert _files(out) == {"index.html": "the person's own page"}


def test_a_published_file_edited_since_is_neither_overwritten_nor_removed(tmp_path):
    site = _site(tmp_path / "site", {"index.html": "one", "extra.html": "extra"})
    out = tmp_path / "www"
    _publish(site, out)
    (out / "extra.html").write_text("edited by hand")
    (site / "extra.html").unlink()
    result = _publish(site, out)
    assert (out / "extra.html").read_text() == "edited by hand"
    assert any("extra.html" in w for w in result.warnings)
    (out / "index.html").write_text("also edited")
    (site / "index.html").write_text("newer")
    with pytest.raises(PublishError):
        _publish(site, out)
    assert (out / "index.html").read_text() == "also edited"


def test_a_link_in_the_folder_is_never_written_through(tmp_path):
    outside = _site(tmp_path / "outside", {"page.html": "outside"})
    out = tmp_path / "www"
    out.mkdir()
    (out / "sub").symlink_to(outside, target_is_directory=True)
    site = _site(tmp_path / "site", {"sub/page.html": "published"})
    with pytest.raises(PublishError):
        _publish(site, out)
    assert (outside / "page.html").read_text() == "outside"


def test_a_relative_path_is_refused(tmp_path):
    site = _site(tmp_path / "site", {"index.html": "x"})
    with pytest.raises(PublishError) as caught:
        publish_to_folder(PublishRequest(site, {"name": "www", "kind": "folder",
                                                "path": "relative/www"}, "m"))
    assert caught.value.code == "E_BAD_ARGS"
