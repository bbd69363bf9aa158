"""Issue 24, item 7 under stress: the citation check of
tests/test_architecture.py over many generated product trees. Each tree mixes
seed citations and pointers to missing docs/ pages (which must be found, each
on its own line) with lines that only look like them: URLs with a /docs/
part, the modes' seeds/ folders, existing pages with trailing punctuation,
and citations inside fetched bundles (vendor/, node_modules/, engine/). The
check reports exactly the planted lines, in every tree."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tests.stress.tally import count, record
from tests.test_architecture import citations_of_missing_documents

pytestmark = pytest.mark.stress

TREES = 40
LINES_PER_FILE = 12
TIME_CAP = 30.0

CITES = [
    "# see ADR-002 §3.1",
    '"""The task state machine (seed: agent-runtime §2)."""',
    "// the workspace model (viewer contract §3.1)",
    "# (reference README §2.3)",
    "# the error model, as coauthor-v0 has it",
    "# from webgal-tool-contracts",
    "# details in docs/design/nowhere.md",
    "// see docs/gone.md.",
]
INNOCENT = [
    "# see docs/tools.md, \"Policies\"",
    "# docs/tools.md.",
    "# (docs/design/) holds the reasons",
    "url = 'https://example.org/docs/guide.html'",
    "# the manifest copies seeds/ into the workspace",
    "seed_files = ['seeds/deck.md']",
    "value = 3  # a plain comment",
    "// chapter 2 of the user's paper",
]
BUNDLE_DIRS = ["vendor", "node_modules", "engine"]


def plant_tree(root: Path, rng: random.Random) -> set[str]:
    """A small product tree with its docs/; returns the lines the check must report."""
    (root / "docs" / "design").mkdir(parents=True)
    (root / "docs" / "tools.md").write_text("# Tools\n")
    expected = set()
    places = [root / "pneuma" / "server", root / "templates" / "mode", root / "plugins" / "m" / "pneuma_m"]
    for index, folder in enumerate(places):
        folder.mkdir(parents=True)
        for suffix in (".py", ".js"):
            path = folder / f"f{index}{suffix}"
            lines = [rng.choice(CITES + INNOCENT) for _ in range(LINES_PER_FILE)]
            path.write_text("\n".join(lines) + "\n")
            rel = path.relative_to(root).as_posix()
            expected |= {f"{rel}:{n}: {line}" for n, line in enumerate(lines, 1) if line in CITES}
        bundle = folder / rng.choice(BUNDLE_DIRS)
        bundle.mkdir()
        (bundle / "bundle.js").write_text("\n".join(CITES) + "\n")
    # A citation outside the product (the plugin's own scripts) is not checked.
    (root / "plugins" / "m" / "scripts").mkdir()
    (root / "plugins" / "m" / "scripts" / "tool.py").write_text("# ADR-002\n")
    return expected


def test_the_citation_check_reports_exactly_the_planted_lines(tmp_path: Path):
    rng = random.Random(24)
    started = time.monotonic()
    planted = reported = trees = 0
    for tree in range(TREES):
        if time.monotonic() - started > TIME_CAP:
            break
        root = tmp_path / f"tree{tree}"
        expected = plant_tree(root, rng)
        found = citations_of_missing_documents(root)
        assert sorted(found) == sorted(expected), f"tree {tree}"
        planted += len(expected)
        reported += len(found)
        trees += 1
    assert trees >= TREES // 2
    record("24.7 doc citations", f"{count(trees)} generated trees, {count(planted)} planted citations: "
                            f"{count(reported)} reported, none missed, no innocent line or bundle flagged")
