"""`pneuma mode add` from a git repository at a tag, a wheel and a folder:
each is listed with where it came from and runs; `mode remove` takes it
away. Real pip, real git, offline, in a throwaway virtualenv."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mode_sources.mode_env import (
    ModeEnv,
    build_wheel,
    git,
    make_mode_env,
    new_mode,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mode_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModeEnv]:
    yield make_mode_env(tmp_path_factory.mktemp("venv") / "v")


def test_a_mode_from_a_git_tag_is_listed_with_its_commit_runs_and_is_removed(
        mode_env: ModeEnv, tmp_path: Path):
    repo = new_mode("gittag", tmp_path)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "tag", "v1.0")
    tagged = git(repo, "rev-parse", "HEAD")
    # A later commit on the branch: the tag, not the branch's head, is what installs.
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.2.0"'))
    git(repo, "commit", "-q", "-am", "second")

    added = mode_env.pneuma("mode", "add", f"{repo}@v1.0", "--no-check", "--json")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["commit"] == tagged
    assert "installing:" in added.stderr and "building:" in added.stderr  # progress as pip works

    listed = mode_env.modes()["gittag"]
    assert (listed["version"], listed["commit"]) == ("0.1.0", tagged)
    assert listed["source"] == f"git+{repo.as_uri()}@v1.0"
    table = mode_env.pneuma("modes").stdout
    assert any(line.split()[:2] == ["gittag", "0.1.0"]
               and line.split()[-1] == f"git+{repo.as_uri()}@v1.0"
               for line in table.splitlines()), table
    assert mode_env.starts("gittag", tmp_path / "ws").startswith("[pneuma] ready ")

    # The tag moves on: `mode update` installs what it names now, and says so.
    git(repo, "tag", "-f", "v1.0")
    newer = git(repo, "rev-parse", "HEAD")
    updated = mode_env.pneuma("mode", "update", "gittag", "--no-check")
    assert updated.returncode == 0, updated.stderr
    assert updated.stdout.strip() == f"Updated gittag: 0.1.0 ({tagged[:12]}) → 0.2.0 ({newer[:12]})"
    assert (mode_env.modes()["gittag"]["commit"]) == newer

    removed = mode_env.pneuma("mode", "remove", "gittag")
    assert removed.returncode == 0, removed.stderr
    assert "gittag" not in mode_env.modes()
    assert not any(line.startswith("pneuma-gittag") for line in mode_env.freeze())


def test_a_wheel_and_an_editable_folder_are_listed_with_their_source_and_run(
        mode_env: ModeEnv, tmp_path: Path):
    wheel = build_wheel(new_mode("wheeled", tmp_path / "w"), tmp_path / "dist")
    folder = new_mode("foldered", tmp_path / "f")

    assert mode_env.pneuma("mode", "add", str(wheel), "--no-check").returncode == 0
    added = mode_env.pneuma("mode", "add", str(folder), "--editable", "--no-check")
    assert added.returncode == 0, added.stderr
    assert "Installed foldered 0.1.0" in added.stdout

    listed = mode_env.modes()
    assert (listed["wheeled"]["source"], listed["wheeled"]["version"]) == (str(wheel), "0.1.0")
    assert (listed["foldered"]["source"], listed["foldered"]["editable"]) == (str(folder), True)
    # Editable: a change in the folder is what runs, with no reinstall.
    manifest = next(folder.glob("pneuma_foldered/manifest.json"))
    data = json.loads(manifest.read_text())
    data["displayName"] = "Foldered, edited"
    manifest.write_text(json.dumps(data))
    assert mode_env.modes()["foldered"]["displayName"] == "Foldered, edited"
    assert mode_env.starts("wheeled", tmp_path / "ws1").startswith("[pneuma] ready ")
    assert mode_env.starts("foldered", tmp_path / "ws2").startswith("[pneuma] ready ")

    listing = json.loads(mode_env.pneuma("mode", "list", "--json").stdout)
    assert {m["name"]: m["source"] for m in listing}["doc"] == "built-in"
    for name in ("wheeled", "foldered"):
        assert mode_env.pneuma("mode", "remove", name).returncode == 0
    assert not {"wheeled", "foldered"} & set(mode_env.modes())


def test_a_built_in_mode_or_an_unknown_name_cannot_be_removed(mode_env: ModeEnv):
    before = mode_env.freeze()
    built_in = mode_env.pneuma("mode", "remove", "doc")
    assert built_in.returncode == 1
    assert built_in.stderr.strip() == ("pneuma: error: doc is a built-in mode: it comes with "
                                       "Pneuma and cannot be removed or updated on its own")
    unknown = mode_env.pneuma("mode", "remove", "nosuchmode")
    assert unknown.returncode == 1
    assert "no installed mode named 'nosuchmode'" in unknown.stderr
    assert mode_env.freeze() == before


def test_a_release_by_name_comes_from_the_index_and_updates_to_the_newest(
        mode_env: ModeEnv, tmp_path: Path):
    # A folder of wheels stands in for PyPI (pip's --find-links; nothing leaves the machine).
    index = tmp_path / "index"
    project = new_mode("released", tmp_path / "src")
    build_wheel(project, index)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.2.0"'))
    build_wheel(project, index)
    links = {"PIP_FIND_LINKS": str(index)}

    added = mode_env.pneuma("mode", "add", "pneuma-released==0.1.0", "--no-check", env=links)
    assert added.returncode == 0, added.stderr
    listed = mode_env.modes()["released"]
    assert (listed["source"], listed["version"]) == ("pneuma-released==0.1.0", "0.1.0")

    updated = mode_env.pneuma("mode", "update", "released", "--no-check", env=links)
    assert updated.returncode == 0, updated.stderr
    assert updated.stdout.strip() == "Updated released: 0.1.0 → 0.2.0"
    assert mode_env.pneuma("mode", "remove", "released").returncode == 0
