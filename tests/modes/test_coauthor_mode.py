"""The coauthor mode: manifest, the seed LaTeX paper, the patch recipe the
skill teaches, and skill installation.

What every seeded mode's setup promises (no seeds over the person's own
work, a second skill install changes nothing) is in test_mode_setup.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from wcmatch import glob as wcglob

from pneuma.host.registry import get_mode
from pneuma.workspace.params import GLOB_FLAGS, has_content
from pneuma.workspace.skill import install_skill

ACTIONS = {"navigate-to", "describe-view", "show-task", "show-patch"}
SEED_FILES = [
    "main.tex",
    "latexmkrc",
    "refs.bib",
    "OUTLINE.md",
    "BRIEF.md",
    "STYLE.md",
    "sections/abstract.tex",
    "sections/introduction.tex",
    "sections/method.tex",
    "sections/results.tex",
    "sections/conclusion.tex",
    "figures/coauthor-loop.pdf",
]
LABEL_PREFIXES = ("sec:", "fig:", "tab:", "eq:")


@pytest.fixture(scope="module")
def mode():
    return get_mode("coauthor")


# --- a small LaTeX reader, enough to check the seeds ---


def strip_comments(text: str) -> str:
    """Drop everything from an unescaped % to the end of its line."""
    return "\n".join(re.sub(r"(?<!\\)%.*", "", line) for line in text.splitlines())


def tex_sources(workspace: Path) -> dict[str, str]:
    return {
        p.relative_to(workspace).as_posix(): strip_comments(p.read_text("utf-8"))
        for p in sorted(workspace.rglob("*.tex"))
    }


def arguments(command: str, text: str) -> list[str]:
    """The mandatory argument of every use of a command (optional args skipped)."""
    pattern = re.compile(r"\\" + command + r"\*?(?:\[[^\]]*\]){0,2}\{([^}]*)\}")
    return pattern.findall(text)


def cite_keys(text: str) -> set[str]:
    keys: set[str] = set()
    for match in re.finditer(r"\\cite[a-zA-Z]*\*?(?:\[[^\]]*\]){0,2}\{([^}]*)\}", text):
        keys.update(k.strip() for k in match.group(1).split(",") if k.strip())
    return keys


def bib_entries(text: str) -> dict[str, str]:
    """BibTeX key -> entry type, checking that each entry's braces balance."""
    entries: dict[str, str] = {}
    for match in re.finditer(r"@(\w+)\s*\{\s*([^,\s]+)\s*,", text):
        kind, key = match.group(1).lower(), match.group(2)
        assert key not in entries, f"refs.bib defines {key} twice"
        depth, i = 1, match.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        assert depth == 0, f"refs.bib entry {key} never closes"
        entries[key] = kind
    return entries


def check_balanced(name: str, text: str) -> None:
    """Braces balance and \\begin/\\end environments nest properly."""
    depth = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        for match in re.finditer(r"\\.|[{}]", line):
            token = match.group(0)
            if token == "{":
                depth += 1
            elif token == "}":
                depth -= 1
                assert depth >= 0, f"{name}:{lineno}: '}}' without '{{'"
    assert depth == 0, f"{name}: {depth} unclosed '{{'"
    stack: list[str] = []
    for match in re.finditer(r"\\(begin|end)\{([^}]*)\}", text):
        kind, env = match.groups()
        if kind == "begin":
            stack.append(env)
        else:
            assert stack, f"{name}: \\end{{{env}}} without \\begin"
            top = stack.pop()
            assert top == env, f"{name}: \\begin{{{top}}} closed by \\end{{{env}}}"
    assert not stack, f"{name}: unclosed environments {stack}"


def resolve_input(workspace: Path, target: str) -> Path:
    path = workspace / target
    return path if path.suffix == ".tex" else path.with_name(path.name + ".tex")


# --- the manifest ---


def test_mode_loads_with_its_actions_and_workflows(mode):
    manifest = mode.manifest
    assert manifest.layout == "editor"
    assert manifest.display_name == {"en": "CoAuthor (LaTeX)", "zh-CN": "CoAuthor 论文协作"}
    assert manifest.skill.install_name == "pneuma-coauthor"
    # The browser viewer ships in the package's static folder.
    assert manifest.viewer.module == "viewer.js"
    assert (mode.static_dir / "viewer.js").is_file()
    workspace = manifest.viewer_api.workspace
    assert (workspace.type, workspace.multi_file, workspace.ordered, workspace.has_active_file) == (
        "all", True, False, True,
    )
    assert {a.id for a in manifest.viewer_api.actions} == ACTIONS
    assert {a.id for a in manifest.agent_actions} == ACTIONS
    assert manifest.action("navigate-to").params["file"].required
    assert not manifest.action("navigate-to").params["line"].required
    assert manifest.action("show-task").params["taskId"].required
    assert manifest.action("show-patch").params["patchId"].required
    assert manifest.tools == []

    task = next(w for w in manifest.workflows if w.id == "coauthor-task")
    steps = [s.id for s in task.steps]
    assert steps == [
        "claim", "context", "drift", "plan", "questions", "propose", "review", "apply", "show", "done",
    ]
    review = next(s for s in task.steps if s.id == "review")
    assert review.action == "show-patch" and review.requires_confirmation
    assert next(s for s in task.steps if s.id == "show").action == "navigate-to"
    context = next(s for s in task.steps if s.id == "context").prompt
    assert "OUTLINE.md" in context and "BRIEF.md" in context and "STYLE.md" in context
    # The plan precedes the patch, and the patch precedes the review.
    assert steps.index("plan") < steps.index("propose") < steps.index("review") < steps.index("apply")
    assert {w.id for w in manifest.workflows} >= {"coauthor-task", "draft-section", "check-paper"}
    assert {c.id for c in manifest.viewer_api.commands} >= {"review-section", "tighten-abstract"}


def test_init_params(mode):
    params = {p.name: p for p in mode.manifest.init.params}
    assert set(params) == {"paperTitle", "venue", "citationStyle"}
    assert params["citationStyle"].type == "select"
    assert params["citationStyle"].options == ["author-year", "numeric"]
    assert params["citationStyle"].default_value == "author-year"
    # Every param has a default, so --no-prompt works.
    assert all(p.default_value is not None for p in params.values())


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("main.tex", True),
        ("sections/method.tex", True),
        ("refs.bib", True),
        ("OUTLINE.md", True),
        ("BRIEF.md", True),
        ("STYLE.md", True),
        ("figures/coauthor-loop.pdf", True),
        ("build/main.pdf", False),
        ("build/main.aux", False),
        ("main.aux", False),
        ("main.log", False),
        ("sections/method.aux", False),
        (".pneuma/coauthor/events.jsonl", False),
        (".pneuma/coauthor/work/t-001-p1/new/sections/method.tex", False),
        ("notes.txt", False),
    ],
)
def test_viewer_shows_sources_not_build_output(mode, path: str, shown: bool):
    viewer = mode.manifest.viewer
    watched = any(wcglob.globmatch(path, p, flags=GLOB_FLAGS) for p in viewer.watch_patterns)
    ignored = any(wcglob.globmatch(path, p, flags=GLOB_FLAGS) for p in viewer.ignore_patterns)
    assert (watched and not ignored) is shown


# --- seeding ---


def test_seeding_writes_the_paper(mode, seeded: Path):
    for rel in SEED_FILES:
        assert (seeded / rel).is_file(), rel
    assert has_content(mode, seeded)
    # The seed sources name no init param: they are copied verbatim.
    for path in seeded.rglob("*"):
        if path.is_file() and path.suffix in {".tex", ".bib", ".md"}:
            assert "{{" not in path.read_text("utf-8"), path


def test_every_input_exists_and_every_section_is_input(seeded: Path):
    reached: set[str] = set()
    pending = ["main.tex"]
    while pending:
        current = pending.pop()
        reached.add(current)
        text = strip_comments((seeded / current).read_text("utf-8"))
        for target in arguments("input", text) + arguments("include", text):
            path = resolve_input(seeded, target)
            assert path.is_file(), f"{current}: \\input{{{target}}} has no file"
            pending.append(path.relative_to(seeded).as_posix())
    section_files = {p.relative_to(seeded).as_posix() for p in (seeded / "sections").glob("*.tex")}
    assert section_files <= reached, f"never input: {section_files - reached}"


def test_every_cite_key_is_in_refs_bib(seeded: Path):
    entries = bib_entries((seeded / "refs.bib").read_text("utf-8"))
    assert len(entries) >= 5
    cited: set[str] = set()
    for name, text in tex_sources(seeded).items():
        keys = cite_keys(text)
        missing = keys - set(entries)
        assert not missing, f"{name} cites undefined keys {sorted(missing)}"
        cited |= keys
    assert cited == set(entries), f"uncited entries: {sorted(set(entries) - cited)}"
    main = tex_sources(seeded)["main.tex"]
    assert arguments("bibliography", main) == ["refs"]


def test_every_ref_has_a_label(seeded: Path):
    sources = tex_sources(seeded)
    labels: list[str] = []
    for text in sources.values():
        labels += arguments("label", text)
    assert len(labels) == len(set(labels)), "a label is defined twice"
    assert all(label.startswith(LABEL_PREFIXES) for label in labels), labels
    for name, text in sources.items():
        for command in ("ref", "eqref", "autoref", "pageref"):
            for target in arguments(command, text):
                assert target in labels, f"{name}: \\{command}{{{target}}} has no \\label"
    # The seed shows every kind of label it teaches.
    assert {label.split(":")[0] + ":" for label in labels} == set(LABEL_PREFIXES)


def test_every_figure_exists_and_is_a_valid_pdf(seeded: Path):
    graphics = [g for text in tex_sources(seeded).values() for g in arguments("includegraphics", text)]
    assert graphics
    for target in graphics:
        candidates = [seeded / target] + [seeded / f"{target}{ext}" for ext in (".pdf", ".png", ".jpg")]
        path = next((c for c in candidates if c.is_file()), None)
        assert path is not None, f"\\includegraphics{{{target}}} has no file"
        assert path.suffix in {".pdf", ".png", ".jpg"}, "pdflatex cannot include this format"
    pdf = (seeded / "figures/coauthor-loop.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-1.") and pdf.rstrip().endswith(b"%%EOF")
    # Every cross-reference offset points at its object.
    startxref = int(pdf[pdf.rindex(b"startxref") + 9:].split()[0])
    table = pdf[startxref:].split(b"trailer")[0].splitlines()
    assert table[0] == b"xref"
    count = int(table[1].split()[1])
    for number, row in enumerate(table[3:3 + count - 1], start=1):
        offset = int(row.split()[0])
        assert pdf[offset:].startswith(f"{number} 0 obj".encode()), f"object {number}"


@pytest.mark.parametrize(
    "rel", [r for r in SEED_FILES if r.endswith(".tex")]
)
def test_braces_and_environments_balance(seeded: Path, rel: str):
    check_balanced(rel, strip_comments((seeded / rel).read_text("utf-8")))


def test_check_balanced_catches_mistakes():
    with pytest.raises(AssertionError):
        check_balanced("x.tex", "\\begin{figure}\\end{table}")
    with pytest.raises(AssertionError):
        check_balanced("x.tex", "\\emph{open")
    check_balanced("x.tex", "50\\% of \\{a set\\} \\begin{itemize}\\item a\\end{itemize}")


def test_sections_put_one_sentence_per_line(seeded: Path):
    for rel, text in tex_sources(seeded).items():
        if not rel.startswith("sections/"):
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            assert not re.search(r"[a-z0-9)'][.?!] +[A-Z]", line), f"{rel}:{lineno}: {line}"


def test_outline_brief_and_sources_agree(seeded: Path):
    outline = (seeded / "OUTLINE.md").read_text("utf-8")
    brief = (seeded / "BRIEF.md").read_text("utf-8")
    sources = tex_sources(seeded)
    labels = {label for text in sources.values() for label in arguments("label", text)}
    # Every section file is in the outline, and every file or label it names exists.
    for rel in sources:
        if rel.startswith("sections/"):
            assert f"`{rel}`" in outline, f"{rel} is missing from OUTLINE.md"
    for rel in re.findall(r"`(sections/[^`]+\.tex|figures/[^`]+)`", outline):
        assert (seeded / rel).is_file(), f"OUTLINE.md names missing {rel}"
    for label in re.findall(r"`((?:sec|fig|tab|eq):[^`]+)`", outline):
        assert label in labels, f"OUTLINE.md names unknown label {label}"
    entries = bib_entries((seeded / "refs.bib").read_text("utf-8"))
    assert cite_keys(outline) <= set(entries)
    # Every figure is described in BRIEF.md: the agent may not guess what it shows.
    for figure in (seeded / "figures").iterdir():
        assert f"`figures/{figure.name}`" in brief, f"{figure.name} is not described in BRIEF.md"
    assert "What we do not know yet" in brief


def test_paper_compiles(seeded: Path):
    latexmk, pdflatex = shutil.which("latexmk"), shutil.which("pdflatex")
    if not (latexmk or pdflatex):
        pytest.skip("no TeX installation (latexmk or pdflatex) on PATH")
    if latexmk:
        run = subprocess.run([latexmk, "-quiet"], cwd=seeded, capture_output=True, text=True, timeout=120)
    else:
        (seeded / "build").mkdir()
        latex = [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-output-directory", "build", "main.tex"]
        run = subprocess.run(latex, cwd=seeded, capture_output=True, text=True, timeout=60)
        if run.returncode == 0 and shutil.which("bibtex"):
            subprocess.run(["bibtex", "build/main"], cwd=seeded, capture_output=True, timeout=60)
            for _ in range(2):
                run = subprocess.run(latex, cwd=seeded, capture_output=True, text=True, timeout=60)
    log = (seeded / "build/main.log").read_text("latin-1") if (seeded / "build/main.log").exists() else ""
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:] + log[-3000:]
    assert (seeded / "build/main.pdf").stat().st_size > 10_000
    assert not re.search(r"(Citation|Reference) `[^']*' .*undefined", log)
    overfull = [float(w) for w in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)]
    assert all(width <= 5 for width in overfull), f"text runs into the margin: {overfull}"


# --- the patch recipe the skill teaches ---


def shell_blocks(markdown: str, heading: str) -> list[str]:
    section = markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, re.S)


def bash(script: str, cwd: Path) -> str:
    run = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@pytest.mark.skipif(
    not all(shutil.which(t) for t in ("bash", "patch", "sha256sum", "diff")),
    reason="needs bash, patch, diff and sha256sum",
)
def test_documented_patch_recipe_applies_and_refuses_drift(mode, seeded: Path):
    doc = (mode.skill_dir / "references/patch-format.md").read_text("utf-8")
    copy, write = shell_blocks(doc, "Making a patch")
    (propose,) = shell_blocks(doc, "Proposing it")
    (accept,) = shell_blocks(doc, "Applying an accepted patch")
    assert "patch propose" in propose and "patch accept" in accept
    target = seeded / "sections/abstract.tex"
    original = target.read_text("utf-8")

    # Draft in the work folder: the real file is untouched until the apply.
    bash(copy, seeded)
    draft = seeded / ".pneuma/coauthor/work/t-004-p2/new/sections/abstract.tex"
    draft.write_text(original.replace("Code agents can now edit", "Code agents now edit"), "utf-8")
    bash(write, seeded)
    patch_file = (seeded / ".pneuma/coauthor/patches/t-004-p2.diff").read_text("utf-8")
    assert patch_file.startswith("# coauthor-patch 1\n# patchId: t-004-p2\n# taskId: t-004\n")
    assert re.search(r"^# file: sections/abstract.tex base=sha256:[0-9a-f]{64} result=sha256:[0-9a-f]{64}$",
                     patch_file, re.M)
    assert "+Code agents now edit" in patch_file
    assert target.read_text("utf-8") == original

    # The documented commands, run in-process: the header's patchId is kept.
    from click.testing import CliRunner

    from pneuma_coauthor.cli import coauthor

    def pc(*args: str, stdin: str | None = None):
        return CliRunner().invoke(coauthor, ["-w", str(seeded), *args], input=stdin, catch_exceptions=False)

    for n in range(1, 5):
        pc("task", "create", f"task {n}", "--file", "sections/abstract.tex")
    result = pc("--actor", "coauthor", "patch", "propose", "t-004", "sections/abstract.tex", stdin=patch_file)
    assert result.exit_code == 0 and result.stdout.splitlines()[-1] == "t-004-p2", result.output

    # The person edits the file meanwhile: accept refuses, and their edit stays.
    target.write_text(original + "\n", "utf-8")
    refused = pc("patch", "accept", "t-004", "t-004-p2")
    assert refused.exit_code == 2 and "drift sections/abstract.tex" in refused.stdout
    assert target.read_text("utf-8") == original + "\n"
    # A patch drafted again from the current text applies and lands exactly the draft.
    target.write_text(original, "utf-8")
    result = pc("--actor", "coauthor", "patch", "propose", "t-004", "sections/abstract.tex",
                stdin=patch_file.replace("t-004-p2", "t-004-p3"))
    assert result.exit_code == 0, result.output
    applied = pc("patch", "accept", "t-004", "t-004-p3", "--no-build")
    assert applied.exit_code == 0 and "applied sections/abstract.tex" in applied.stdout, applied.output
    assert target.read_text("utf-8") == draft.read_text("utf-8")


# --- the skill ---

PARAMS = {"paperTitle": "Quiet Agents", "venue": "CHI 2026 Late-Breaking Work, 6 pages", "citationStyle": "numeric"}


def test_skill_installs_with_params_substituted(mode, seeded: Path):
    result = install_skill(mode, seeded, PARAMS)
    assert result.changed
    root = seeded / ".claude/skills/pneuma-coauthor"
    skill = (root / "SKILL.md").read_text("utf-8")
    assert skill.startswith("---\nname: pneuma-coauthor\ndescription: ")
    assert "**Quiet Agents**" in skill
    assert "Target venue: **CHI 2026 Late-Breaking Work, 6 pages**" in skill
    assert "No venue chosen yet" not in skill
    assert "The style is **numeric**." in skill
    assert not re.search(r"\{\{[#^/]?\s*\w+\s*\}\}", skill), "an init param was left unfilled"
    assert '"actionId":"show-patch"' in skill and '"action":' not in skill
    assert '<viewer-context mode="coauthor"' in skill
    for status in ("open", "claimed", "in_progress", "awaiting_review", "done", "blocked", "canceled"):
        assert f"`{status}`" in skill
    for rel in re.findall(r"`(references/[^`]+\.md)`", skill):
        assert (root / rel).is_file(), rel
    assert (root / "references/task-lifecycle.md").is_file()
    assert (root / "references/patch-format.md").is_file()

    claude = (seeded / "CLAUDE.md").read_text("utf-8")
    assert ".claude/skills/pneuma-coauthor/SKILL.md" in claude
    assert "Type: all" in claude
    for action in ACTIONS:
        assert f"| `{action}` |" in claude
    assert "patchId: string (required)" in claude
    assert "taskId: string (required)" in claude
    for workflow in ("coauthor-task", "draft-section", "check-paper"):
        assert f"/{workflow}" in claude
        assert (seeded / f".claude/commands/{workflow}.md").is_file()
    # Installing never touches the paper.
    assert (seeded / "main.tex").read_bytes() == (mode.package_dir / "seeds/main.tex").read_bytes()


def test_skill_without_a_venue_says_so(mode, seeded: Path):
    install_skill(mode, seeded, {"paperTitle": "Quiet Agents", "venue": "", "citationStyle": "author-year"})
    skill = (seeded / ".claude/skills/pneuma-coauthor/SKILL.md").read_text("utf-8")
    assert "No venue chosen yet" in skill
    assert "Target venue" not in skill
    assert "The style is **author-year**." in skill
