"""``pneuma publish``: a workspace's result to one of the person's targets,
named in their publish.toml (never in the workspace). The issue's
Done-when: a webcraft workspace published to a bare git repository on
disk — a clone of the branch holds the site; publishing again makes no
commit."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pneuma.api import Publisher, PublishRequest, PublishResult, hookimpl
from pneuma.cli import cli
from pneuma.host.registry import get_mode
from pneuma.share.model import read_share_file
from pneuma.testing import register_plugin
from pneuma.workspace.params import init_workspace
from tests.publish.conftest import branch_commits, branch_files


def _workspace(path: Path, mode: str) -> Path:
    init_workspace(get_mode(mode), path, record=True)
    return path


def _targets(home: Path, text: str) -> Path:
    folder = home / ".config" / "pneuma"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "publish.toml").write_text(text)
    return folder / "publish.toml"


def _site_files(workspace: Path) -> dict[str, str]:
    return {p.relative_to(workspace).as_posix(): p.read_text() for p in sorted(workspace.rglob("*"))
            if p.is_file() and p.suffix in (".html", ".css", ".js")
            and ".pneuma" not in p.parts and p.name != "CLAUDE.md"}


def test_a_webcraft_site_published_to_a_bare_repository_and_again_without_a_commit(
        tmp_path, git_home, bare_remote):
    site = _workspace(tmp_path / "site", "webcraft")
    _targets(git_home, f'[targets.pages]\nkind = "git"\nremote = "{bare_remote}"\n'
                       'branch = "gh-pages"\nurl = "https://{user}.example.org/{repo}/"\n')
    first = CliRunner().invoke(cli, ["publish", "-w", str(site), "--to", "pages", "--json"])
    assert first.exit_code == 0, first.output
    done = json.loads(first.output.strip().splitlines()[-1])
    assert done["changed"] is True and done["url"] == f"https://{tmp_path.name}.example.org/remote/"
    published = branch_files(bare_remote, "gh-pages", tmp_path / "clone")
    expected = _site_files(site)
    assert "index.html" in expected
    assert {rel: published.get(rel) for rel in expected} == expected
    assert not any(rel.startswith(".pneuma") or rel == "CLAUDE.md" for rel in published)
    again = CliRunner().invoke(cli, ["publish", "-w", str(site), "--to", "pages"])
    assert again.exit_code == 0, again.output
    assert "nothing changed" in again.output and done["commit"][:12] in again.output
    assert branch_commits(bare_remote, "gh-pages") == [done["commit"]]
    assert not (site / "publish.toml").exists() and not (site / ".pneuma" / "publish.toml").exists()


def test_a_deck_is_published_as_its_html_export_into_a_folder(tmp_path, git_home):
    deck = _workspace(tmp_path / "deck", "slide")
    out = tmp_path / "www"
    _targets(git_home, f'[targets.www]\nkind = "folder"\npath = "{out}"\n')
    result = CliRunner().invoke(cli, ["publish", "-w", str(deck), "--to", "www", "-m", "talk"])
    assert result.exit_code == 0, result.output
    page = (out / "index.html").read_text()
    assert "Making things with an agent you can see" in page  # the first slide
    assert "Seven modes, one protocol" in page  # and the sixth, in one page
    assert out.as_uri() in result.output


def test_a_webgal_game_is_published_as_its_playable_build(tmp_path, git_home, monkeypatch):
    engine = tmp_path / "engine"  # a stand-in for the pinned engine's dist/
    (engine / "assets").mkdir(parents=True)
    (engine / "index.html").write_text('<script type="module" src="./assets/e.js"></script>')
    (engine / "assets" / "e.js").write_text("console.log('engine')")
    monkeypatch.setenv("PNEUMA_WEBGAL_ENGINE_DIR", str(engine))
    game = _workspace(tmp_path / "game", "webgal")
    out = tmp_path / "www"
    _targets(git_home, f'[targets.www]\nkind = "folder"\npath = "{out}"\n')
    result = CliRunner().invoke(cli, ["publish", "-w", str(game), "--to", "www"])
    assert result.exit_code == 0, result.output
    assert (out / "index.html").read_text() == (engine / "index.html").read_text()
    start = game / "game" / "scene" / "start.txt"
    assert (out / "game" / "scene" / "start.txt").read_text() == start.read_text()
    again = CliRunner().invoke(cli, ["publish", "-w", str(game), "--to", "www"])
    assert "nothing changed" in again.output


def test_list_shows_the_targets_and_never_a_password(tmp_path, git_home):
    _targets(git_home, '[targets.pages]\nkind = "git"\n'
                       'remote = "https://ada:tok3n@git.example.org/ada/site.git"\n'
                       '[targets.www]\nkind = "folder"\npath = "/srv/www"\n')
    listed = CliRunner().invoke(cli, ["publish", "--list"])
    assert listed.exit_code == 0, listed.output
    assert "pages\tgit" in listed.output and "www\tfolder\t/srv/www" in listed.output
    assert "tok3n" not in listed.output
    as_json = json.loads(CliRunner().invoke(cli, ["publish", "--list", "--json"]).output)
    assert [t["name"] for t in as_json["targets"]] == ["pages", "www"]


def test_an_unknown_target_is_one_line_naming_the_file(tmp_path, git_home):
    site = _workspace(tmp_path / "site", "webcraft")
    _targets(git_home, '[targets.www]\nkind = "folder"\npath = "/srv/www"\n')
    result = CliRunner().invoke(cli, ["publish", "-w", str(site), "--to", "nope"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pneuma: error: no publish target named 'nope'")
    assert "publish.toml" in lines[0] and "www" in lines[0]


def test_a_mode_without_a_site_asks_for_a_format(tmp_path, git_home):
    drawing = _workspace(tmp_path / "drawing", "draw")
    _targets(git_home, f'[targets.www]\nkind = "folder"\npath = "{tmp_path / "www"}"\n')
    result = CliRunner().invoke(cli, ["publish", "-w", str(drawing), "--to", "www"])
    assert result.exit_code == 2 and "--format" in result.output and "svg" in result.output


def test_share_publishes_the_shared_file_as_the_index(tmp_path, git_home):
    docs = _workspace(tmp_path / "docs", "doc")
    out = tmp_path / "www"
    _targets(git_home, f'[targets.www]\nkind = "folder"\npath = "{out}"\n')
    result = CliRunner().invoke(cli, ["publish", "-w", str(docs), "--to", "www", "--share"])
    assert result.exit_code == 0, result.output
    shared = read_share_file(out / "index.html")
    assert shared.mode == "doc"
    assert shared.files_at() == {rel: (docs / rel).read_bytes() for rel in shared.files_at()}
    assert "README.md" in shared.files_at() or any(p.endswith(".md") for p in shared.files_at())


class ProbePublisher:
    """A third-party publisher: remembers what it was handed."""

    def __init__(self) -> None:
        self.seen: list[tuple[dict[str, str], dict[str, object], str]] = []

    def _publish(self, request: PublishRequest) -> PublishResult:
        files = {p.relative_to(request.source_dir).as_posix(): p.read_text()
                 for p in sorted(request.source_dir.rglob("*")) if p.is_file()}
        self.seen.append((files, dict(request.target), request.message))
        return PublishResult(summary=f"sent {len(files)} files to the probe", url="probe://x")

    @hookimpl
    def register_publishers(self) -> list[Publisher]:
        return [Publisher("probe", {"en": "the probe", "zh-CN": "探针"}, self._publish)]


def test_a_plugins_publisher_serves_targets_of_its_kind(tmp_path, git_home):
    site = _workspace(tmp_path / "site", "webcraft")
    _targets(git_home, '[targets.p]\nkind = "probe"\ntoken_env = "PROBE_TOKEN"\n')
    probe = ProbePublisher()
    with register_plugin(probe, "probe-publisher"):
        result = CliRunner().invoke(cli, ["publish", "-w", str(site), "--to", "p", "-m", "hello"])
    assert result.exit_code == 0, result.output
    assert "sent" in result.output and "probe://x" in result.output
    [(files, target, message)] = probe.seen
    assert files["index.html"] == (site / "index.html").read_text()
    assert target == {"name": "p", "kind": "probe", "token_env": "PROBE_TOKEN"}
    assert message == "hello"
