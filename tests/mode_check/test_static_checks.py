"""`pneuma mode check`'s checks that read files (manifest, imports, locales)
on a freshly generated mode, and on the same mode with one thing broken."""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma.api import ToolError, check_mode
from tests.mode_check.generated import (
    drop_chinese_action_label,
    edit_manifest,
    generated_mode,
    import_past_the_api,
)

STATIC = ("manifest", "imports", "locales")


def test_a_freshly_generated_mode_passes(tmp_path: Path) -> None:
    report = check_mode(generated_mode(tmp_path), only=STATIC)
    assert report.mode == "probemode" and report.version == "0.1.0"
    assert [(r.check, r.ok) for r in report.results] == [(c, True) for c in STATIC], report.lines()


def test_an_import_past_pneuma_api_is_named_with_its_line(tmp_path: Path) -> None:
    project = generated_mode(tmp_path)
    line = import_past_the_api(project)
    report = check_mode(project, only=STATIC)
    assert not report.ok and [r.check for r in report.failed] == ["imports"]
    assert f"pneuma_probemode/tools.py:{line}: imports pneuma.core.errors" in report.result("imports").message


def test_a_missing_chinese_string_is_named(tmp_path: Path) -> None:
    project = generated_mode(tmp_path)
    drop_chinese_action_label(project)
    report = check_mode(project, only=STATIC)
    assert [r.check for r in report.failed] == ["locales"]
    assert report.result("locales").message == "manifest actions.show-file.label: no zh-CN text"


def test_a_missing_catalogue_key_is_named(tmp_path: Path) -> None:
    project = generated_mode(tmp_path)
    static = project / "pneuma_probemode" / "static"
    (static / "i18n.js").write_text(
        'export const MESSAGES = {\n  "en": {"a.b": "A", "c.d": "C {n}"},\n  "zh-CN": {"c.d": "丙"}\n};\n',
        encoding="utf-8")
    report = check_mode(project, only=["locales"])
    assert report.result("locales").details["problems"] == [
        "i18n.js: 'a.b' has no zh-CN text", "i18n.js: 'c.d' has other placeholders in zh-CN"]


def test_an_invalid_manifest_fails_and_the_browser_checks_do_not_run(tmp_path: Path) -> None:
    project = generated_mode(tmp_path)
    edit_manifest(project, lambda m: m["viewerApi"]["actions"][0].update(category="sideways"))
    report = check_mode(project, only=["manifest", "mount"])
    assert report.result("manifest").message.startswith("viewerApi.actions.0.category:")
    assert report.result("mount").message == "not run: the manifest does not validate"


def test_what_cannot_be_checked_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as unknown:
        check_mode("slide", only=["manifest", "spelling"])
    assert unknown.value.code == "E_BAD_ARGS" and "spelling" in unknown.value.message
    with pytest.raises(ToolError) as missing:
        check_mode("no-such-mode-here", only=STATIC)
    assert missing.value.code == "E_NOT_FOUND"
    with pytest.raises(ToolError) as empty:
        check_mode(tmp_path, only=STATIC)
    assert empty.value.code == "E_BAD_ARGS" and "not a mode package" in empty.value.message
