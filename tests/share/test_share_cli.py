"""`pneuma share` from the terminal: the file where it says, its size, and
one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pneuma.cli import cli
from pneuma.share.model import read_share_file
from pneuma.testing.slide_session import make_slide_session


def test_share_writes_under_exports_and_says_where_and_how_big(tmp_path: Path) -> None:
    session = make_slide_session(tmp_path / "talk", 2)
    result = CliRunner().invoke(cli, ["share", "-w", str(session.workspace)])
    assert result.exit_code == 0, result.output
    target = session.workspace / "exports" / "talk-share.html"
    assert result.stdout.strip() == str(target)
    assert "shared 2 turn(s) as one file of" in result.stderr
    assert [t.ref for t in read_share_file(target).turns] == ["1", "2"]

    as_json = CliRunner().invoke(cli, ["share", "-w", str(session.workspace), "--no-history",
                                       "--no-chat", "-o", str(tmp_path / "one.html"), "--json"])
    said = json.loads(as_json.stdout)
    assert said["turns"] == 1 and said["size"] == (tmp_path / "one.html").stat().st_size


def test_errors_are_one_line_with_the_way_out(tmp_path: Path) -> None:
    missing = CliRunner().invoke(cli, ["share", "-w", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2
    assert missing.stderr.startswith("pneuma: error:")
    session = make_slide_session(tmp_path / "talk", 1, asset_bytes=300_000)
    big = CliRunner().invoke(cli, ["share", "-w", str(session.workspace), "--max-size", "0.1"])
    assert big.exit_code == 1
    line = big.stderr.strip()
    assert "\n" not in line and "over the" in line and "assets/film.bin" in line
    assert "--no-history" in line and "--leave-out" in line
    wrong = CliRunner().invoke(cli, ["share", "-w", str(session.workspace),
                                     "--conversation", "not-one"])
    assert wrong.exit_code == 2 and "has no conversation not-one" in wrong.stderr
