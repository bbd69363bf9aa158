"""What `pneuma mode add SOURCE` reads SOURCE as, and Pneuma's own record
of where modes came from: kept atomically, never through a link. No pip here."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pneuma.core.errors import ToolError
from pneuma.mode_sources import provenance
from pneuma.mode_sources.sources import parse_source
from pneuma.mode_sources.wheel_metadata import read_wheel


def test_every_kind_of_source_becomes_what_pip_installs(tmp_path: Path):
    repo = tmp_path / "pneuma-kanban"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    wheel = tmp_path / "pneuma_kanban-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    sdist = tmp_path / "pneuma-kanban-0.1.0.tar.gz"
    sdist.write_bytes(b"")

    def read(source: str, **kw: bool) -> tuple[str, str, list[str]]:
        spec = parse_source(source, base=tmp_path, **kw)
        return spec.kind, spec.recorded, spec.install_arguments()

    assert read("git+https://example.invalid/a/b.git@v1.0") == (
        "git", "git+https://example.invalid/a/b.git@v1.0", ["git+https://example.invalid/a/b.git@v1.0"])
    assert read("github:you/pneuma-kanban@v1.0")[2] == [
        "git+https://github.com/you/pneuma-kanban.git@v1.0"]
    assert read("git@example.invalid:you/k.git")[2] == ["git+ssh://git@example.invalid/you/k.git"]
    assert read("pneuma-kanban@v2") == ("git", f"git+{repo.as_uri()}@v2", [f"git+{repo.as_uri()}@v2"])
    assert read("pneuma-kanban") == ("folder", str(repo), [str(repo)])
    assert read("./pneuma-kanban", editable=True) == ("folder", str(repo), ["--editable", str(repo)])
    assert read(wheel.name)[:2] == ("wheel", str(wheel))
    assert read(str(sdist))[:2] == ("sdist", str(sdist))
    assert read("pneuma-kanban-pypi==0.1.0") == ("pypi", "pneuma-kanban-pypi==0.1.0",
                                                 ["pneuma-kanban-pypi==0.1.0"])


@pytest.mark.parametrize(("source", "words"), [
    ("", "give a source"),
    ("what is this?", "not a source pneuma can install"),
    ("./missing-folder", "no such folder or file: ./missing-folder"),
    ("git+https://example.invalid/a.git", "--editable needs a local folder"),
])
def test_a_source_of_no_known_kind_is_refused_in_words(tmp_path: Path, source: str, words: str):
    editable = source.startswith("git+")
    with pytest.raises(ToolError) as caught:
        parse_source(source, editable=editable, base=tmp_path)
    assert caught.value.code == ("E_NOT_FOUND" if "missing" in source else "E_BAD_ARGS")
    assert words in caught.value.message


def test_a_wheel_says_its_distribution_version_needs_and_entry_points(tmp_path: Path):
    wheel = tmp_path / "pneuma_kanban-0.3.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pneuma_kanban-0.3.0.dist-info/METADATA",
                         "Metadata-Version: 2.1\nName: pneuma-kanban\nVersion: 0.3.0\n"
                         "Requires-Dist: pneuma>=0.1.0\nRequires-Dist: pytest; extra == \"test\"\n")
        archive.writestr("pneuma_kanban-0.3.0.dist-info/entry_points.txt",
                         "[console_scripts]\nk = x:y\n\n[pneuma]\nkanban = pneuma_kanban\n")
    facts = read_wheel(wheel)
    assert (facts.distribution, facts.version, facts.requires, facts.entry_points) == (
        "pneuma-kanban", "0.3.0", ("pneuma>=0.1.0",), ("kanban",))


def test_the_record_is_written_whole_and_never_through_a_link(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    provenance.remember("Pneuma_Kanban", source="github:you/k@v1", kind="git", editable=False)
    record = json.loads((tmp_path / provenance.RECORD_NAME).read_text())
    assert record["distributions"]["pneuma-kanban"]["source"] == "github:you/k@v1"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"distributions": {"x": {"source": "planted"}}}))
    (tmp_path / provenance.RECORD_NAME).unlink()
    (tmp_path / provenance.RECORD_NAME).symlink_to(elsewhere)
    assert provenance.read_records() == {}  # a planted link counts as no record
    with pytest.raises(ToolError) as caught:
        provenance.remember("pneuma-kanban", source="s", kind="git", editable=False)
    assert caught.value.code == "E_DENY_PATH"
    assert "planted" in elsewhere.read_text()
