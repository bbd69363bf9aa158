"""A source that cannot become a working mode is one clear terminal line
and changes nothing: a bad URL, a build that fails, a package that is no
mode, a mode that does not import (undone, the previous version back)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mode_sources.mode_env import ModeEnv, make_mode_env, new_mode, one_line

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mode_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModeEnv]:
    yield make_mode_env(tmp_path_factory.mktemp("venv") / "v")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, path
    path.write_text(text.replace(old, new))


def test_bad_sources_are_one_line_each_and_install_nothing(mode_env: ModeEnv, tmp_path: Path):
    broken_build = new_mode("nobuild", tmp_path / "b")
    _edit(broken_build / "pyproject.toml", 'packages = ["pneuma_nobuild"]',
          'packages = ["pneuma_nobuild"]\nartifacts = 3')
    not_a_mode = new_mode("nomode", tmp_path / "n")
    _edit(not_a_mode / "pyproject.toml", "[project.entry-points.pneuma]", "[project.entry-points.other]")
    before = mode_env.freeze()

    missing = mode_env.pneuma("mode", "add", f"git+file://{tmp_path}/no-such-repo@v1.0")
    assert missing.returncode == 1
    assert re.fullmatch(r"pneuma: error: git: repository not found: \S*no-such-repo\S* \(.*\)",
                        one_line(missing.stderr)), missing.stderr

    build = mode_env.pneuma("mode", "add", str(broken_build))
    assert build.returncode == 1
    line = one_line(build.stderr)
    assert line.startswith("pneuma: error: build failed: "), build.stderr
    log = re.search(r"the last lines of the build log are in (\S+)\)$", line)
    assert log and "artifacts" in Path(log.group(1)).read_text(), line

    refused = mode_env.pneuma("mode", "add", str(not_a_mode), "--json")
    assert refused.returncode == 1
    assert one_line(refused.stderr) == ("pneuma: error: pneuma-nomode 0.1.0 registers no 'pneuma' "
                                        "entry point: it is not a Pneuma mode; nothing was installed")
    assert json.loads(refused.stdout)["error"]["code"] == "E_UNSUPPORTED"
    assert "building:" not in refused.stderr  # refused before pip built or installed anything

    built_in = Path(__file__).resolve().parents[2] / "plugins" / "doc"
    replacing = mode_env.pneuma("mode", "add", str(built_in))
    assert replacing.returncode == 1
    assert one_line(replacing.stderr) == ("pneuma: error: pneuma-doc comes with Pneuma; it is not "
                                          "added or replaced as a mode (upgrade Pneuma instead); "
                                          "nothing was installed")

    nonsense = mode_env.pneuma("mode", "add", "what is this?")
    assert nonsense.returncode == 1
    assert one_line(nonsense.stderr).startswith("pneuma: error: not a source pneuma can install")

    assert mode_env.freeze() == before


def test_a_mode_that_does_not_import_is_undone_and_the_previous_version_stays(
        mode_env: ModeEnv, tmp_path: Path):
    good = new_mode("flaky", tmp_path / "good")
    added = mode_env.pneuma("mode", "add", str(good), "--no-check")
    assert added.returncode == 0, added.stderr
    before = mode_env.freeze()

    broken = new_mode("flaky", tmp_path / "broken")
    _edit(broken / "pyproject.toml", 'version = "0.1.0"', 'version = "0.2.0"')
    init = broken / "pneuma_flaky" / "__init__.py"
    init.write_text(init.read_text() + "\nimport a_module_nobody_has  # noqa\n")
    update = mode_env.pneuma("mode", "add", str(broken), "--no-check")
    assert update.returncode == 1
    assert one_line(update.stderr) == (
        "pneuma: error: pneuma-flaky installed but its mode does not load: flaky: "
        "ModuleNotFoundError: No module named 'a_module_nobody_has'; pneuma-flaky 0.1.0 is back in "
        "place")

    assert mode_env.freeze() == before  # 0.1.0, as it was
    listed = mode_env.modes()["flaky"]
    assert (listed["version"], listed["source"]) == ("0.1.0", str(good))



def test_a_mode_that_fails_its_check_is_refused_naming_the_check(mode_env: ModeEnv, tmp_path: Path):
    folder = new_mode("nozh", tmp_path)
    _edit(folder / "pneuma_nozh" / "manifest.json", '"label": {"en": "Show a page", "zh-CN": "显示页面"}',
          '"label": {"en": "Show a page"}')
    before = mode_env.freeze()
    refused = mode_env.pneuma("mode", "add", str(folder), "--json")
    assert refused.returncode == 1
    assert re.fullmatch(r"pneuma: error: nozh fails the check: locales \(.*zh-CN.*\) \(install "
                        r"anyway: --no-check\); it was removed again", one_line(refused.stderr))
    error = json.loads(refused.stdout)["error"]
    assert (error["code"], error["details"]["failed"]) == ("E_CHECK_FAILED", ["locales"])
    assert "checking: nozh" in refused.stderr
    assert mode_env.freeze() == before
