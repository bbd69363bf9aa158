"""The coauthor mode's exports (docs/coauthor.md, "Export"): the paper as a
PDF, and an arXiv-ready source archive.

Both build the paper the way the mode always does (build.py's
``run_build``), on a private copy of its sources, exactly as the check
after every turn does (checks.py: the copy, the process group that leaves
no TeX run behind, the ``file:line:error`` reading of the log). Nothing is
written into the workspace but the export itself.

The archive holds what TeX read from the paper's folder (latexmk's
recorder file, ``.fls``), the bibliography databases bibtex or biber read,
and the ``.bbl`` the build made (arXiv does not run bibtex: it needs the
``.bbl`` beside ``main.tex``), each at the path the paper names it by;
never the build folder's other files, Pneuma's state or aux files.
"""

from __future__ import annotations

import gzip
import io
import re
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pneuma.api import (
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    Problem,
)
from pneuma_coauthor.checks import (
    DEFAULT_RC,
    RC_NAMES,
    build_in_group,
    copy_sources,
    problems_of_log,
)

# A paper's full build (bibtex and the passes after it) on a slow machine;
# the check after a turn has a tighter budget because it runs every turn.
BUILD_SECONDS = 180.0
INSTALL_HINT = ("install latexmk and TeX Live: apt-get install latexmk texlive-latex-base "
                "texlive-latex-recommended (scripts/install does this)")
# Where latexmk puts its output: the seed's latexmkrc (and checks.py's
# default) says build/; other latexmkrc files often say out/ or nothing.
OUTPUT_DIRS = ("build", "out", ".")
# Files TeX reads back from its own earlier passes: rebuilt from the sources.
GENERATED_SUFFIXES = frozenset({".aux", ".out", ".toc", ".lof", ".lot", ".log", ".fls", ".nav", ".snm",
                                ".vrb", ".bcf", ".xml", ".blg", ".idx", ".ind", ".ilg", ".glo", ".gls",
                                ".fdb_latexmk", ".synctex", ".gz"})
_BIBDATA = re.compile(r"\\bibdata\{([^}]*)\}")
_BIBSTYLE = re.compile(r"\\bibstyle\{([^}]*)\}")
_BIBER_SOURCE = re.compile(r"<bcf:datasource[^>]*>([^<]+)</bcf:datasource>")
_UNDEFINED_AT = re.compile(r"(\\[A-Za-z@]+|\\.)\s*$")


@dataclass(frozen=True)
class Built:
    """A successful build in a private copy: its folder and where latexmk put its output."""

    copy: Path
    out_dir: Path

    @property
    def pdf(self) -> Path:
        return self.out_dir / "main.pdf"


@contextmanager
def built_paper(workspace: Path, timeout: float | None = None) -> Iterator[Built]:
    """Build ``workspace``'s paper in a private copy (removed on exit), or
    raise the ``ExportError`` that says why it could not be built."""
    if not (workspace / "main.tex").is_file():
        raise ExportError(f"{workspace} has no main.tex: there is no paper to build",
                          hint="the coauthor mode builds main.tex at the top of the workspace")
    if shutil.which("latexmk") is None:
        raise ExportError("the LaTeX build needs latexmk, which is not installed",
                          code="E_UNAVAILABLE", hint=INSTALL_HINT)
    seconds = BUILD_SECONDS if timeout is None else timeout
    with tempfile.TemporaryDirectory(prefix="pneuma-coauthor-export-", ignore_cleanup_errors=True) as tmp:
        copy = Path(tmp)
        too_big = copy_sources(workspace, copy)
        if too_big:
            raise ExportError(f"the paper cannot be built for export: {too_big}")
        _ask_for_file_line_errors(copy)
        try:
            status, detail = build_in_group(copy, seconds)
        except RuntimeError as exc:
            raise ExportError(str(exc).replace("check failed", "build failed"), code="E_PREVIEW_FAIL") from None
        if status == "skipped":
            raise ExportError(f"the LaTeX build did not run: {detail}", code="E_UNAVAILABLE", hint=INSTALL_HINT)
        if status != "ok":
            raise _build_error(detail, seconds)
        out_dir = next((copy / d for d in OUTPUT_DIRS if (copy / d / "main.pdf").is_file()), None)
        if out_dir is None:
            raise ExportError("the LaTeX build finished without writing main.pdf", code="E_PREVIEW_FAIL",
                              hint="check that the workspace's latexmkrc builds a PDF (for example $pdf_mode = 1)")
        yield Built(copy, out_dir)


def _ask_for_file_line_errors(copy: Path) -> None:
    """Make every TeX run of the copy's build write ``file:line: error``
    (kpathsea reads ``file_line_error_style`` from the environment, which a
    latexmkrc, Perl, sets for the commands it runs), so an error names its
    file even when the person's own latexmkrc does not ask for it. Only the
    private copy's latexmkrc is changed."""
    rc = next((copy / name for name in RC_NAMES if (copy / name).is_file()), None)
    if rc is None:
        (copy / "latexmkrc").write_text(DEFAULT_RC, encoding="utf-8")
        return
    with rc.open("a", encoding="utf-8") as extra:
        extra.write("\n$ENV{'file_line_error_style'} = 't';\n")


def _build_error(detail: str, seconds: float) -> ExportError:
    if detail.startswith("latexmk did not finish"):
        return ExportError(f"the LaTeX build did not finish within {seconds:.0f} s and was stopped",
                           code="E_TIMEOUT", hint="look for a macro or loop that never ends in the paper")
    problems = problems_of_log(detail)
    first = _where_and_what(problems[0], detail)
    more = len(problems) - 1
    hint = f"fix it and export again ({more} more error(s) after it)" if more else "fix it and export again"
    return ExportError(f"the LaTeX build failed: {first}", hint=hint)


def _where_and_what(problem: Problem, detail: str) -> str:
    """``file:line: message`` (as compilers write it), with the control
    sequence TeX did not know when that is the error."""
    message = problem.message.removeprefix("the LaTeX build failed: ")  # said once, by the caller
    if problem.line is not None and ": " in message:
        message = message.split(": ", 1)[1]
    if message.startswith("Undefined control sequence"):
        context = next((m.group(2) for m in re.finditer(r"^l\.(\d+) ?(.*)$", detail, re.M)
                        if problem.line is None or int(m.group(1)) == problem.line), "")
        if name := _UNDEFINED_AT.search(context):
            message = f"Undefined control sequence {name.group(1)}"
    if problem.file and problem.line is not None:
        return f"{problem.file}:{problem.line}: {message}"
    if problem.line is not None:
        return f"line {problem.line}: {message}"
    return message


def export_pdf(request: ExportRequest) -> ExportResult:
    with built_paper(request.workspace) as built:
        _write_whole(request.output, lambda tmp: shutil.copyfile(built.pdf, tmp))
    size = request.output.stat().st_size
    return ExportResult([request.output], summary=f"the paper as PDF ({max(1, size // 1024)} KiB)")


def export_arxiv(request: ExportRequest) -> ExportResult:
    with built_paper(request.workspace) as built:
        members, warnings = arxiv_members(built)
        _write_whole(request.output, lambda tmp: write_tar_gz(tmp, members))
    figures = sum(1 for name in members if not name.endswith((".tex", ".bib", ".bbl", ".sty", ".cls", ".bst")))
    return ExportResult([request.output], warnings,
                        f"{len(members)} files for arXiv ({figures} figure(s), with main.bbl)")


def _write_whole(output: Path, write: Callable[[Path], object]) -> None:
    """Write through a temporary file beside ``output``, so an export that
    fails halfway leaves neither a broken output nor the temporary file."""
    tmp = output.with_name(output.name + ".tmp")
    try:
        write(tmp)
        tmp.replace(output)
    finally:
        tmp.unlink(missing_ok=True)


def arxiv_members(built: Built) -> tuple[dict[str, Path], list[str]]:
    """Archive name → file in the copy: what the paper's build read from its
    own folder (by the name the paper gives it), the bibliography databases,
    and the build's ``.bbl`` beside ``main.tex``."""
    copy, out_dir = built.copy, built.out_dir
    members: dict[str, Path] = {}
    for source in _recorded_inputs(_generated(built, "main.fls"), copy):
        rel = source.relative_to(copy)
        in_output = source.parent == out_dir and out_dir != copy
        if source.suffix == ".bbl":
            members[source.name] = source  # arXiv reads <jobname>.bbl beside the .tex
        elif not in_output and source.suffix.lower() not in GENERATED_SUFFIXES:
            members[rel.as_posix()] = source
    warnings: list[str] = []
    databases, styles = _bibliography_names(_generated(built, "main.aux"), _generated(built, "main.bcf"))
    for name in databases:
        found = _find_in(copy, name)
        if found is None:
            warnings.append(f"{name} is named by the paper's bibliography but is not in the workspace")
        else:
            members[found.relative_to(copy).as_posix()] = found
    for name in styles:  # a style of the paper's own (TeX Live's are found on arXiv too)
        if (found := _find_in(copy, name)) is not None:
            members[found.relative_to(copy).as_posix()] = found
    if not any(name.endswith(".bbl") for name in members) and (out_dir / "main.bbl").is_file():
        members["main.bbl"] = out_dir / "main.bbl"
    return dict(sorted(members.items())), warnings


def _recorded_inputs(fls: Path, copy: Path) -> list[Path]:
    """The files TeX read that lie inside the copy (latexmk runs TeX with
    ``-recorder``: each ``INPUT`` line names one, relative to ``PWD``)."""
    if not fls.is_file():
        raise ExportError("the LaTeX build left no record of the files it read (main.fls)", code="E_PREVIEW_FAIL",
                          hint="latexmk records them unless the workspace's latexmkrc sets $recorder = 0")
    root = copy.resolve()
    pwd = root
    found: dict[Path, None] = {}
    for line in fls.read_text("utf-8", errors="replace").splitlines():
        if line.startswith("PWD "):
            pwd = Path(line[4:].strip())
        elif line.startswith("INPUT "):
            path = (pwd / line[6:].strip()).resolve()
            if path.is_relative_to(root) and path.is_file():
                found.setdefault(path)
    return list(found)


def _generated(built: Built, name: str) -> Path:
    """A file the build wrote: in its output folder, or wherever a
    latexmkrc's ``$aux_dir`` put it."""
    path = built.out_dir / name
    if path.is_file():
        return path
    return next(iter(sorted(built.copy.rglob(name))), path)


def _bibliography_names(aux: Path, bcf: Path) -> tuple[list[str], list[str]]:
    """The ``.bib`` files bibtex (``\\bibdata`` in the .aux) or biber (the
    ``.bcf``'s data sources) read, and bibtex's styles (``\\bibstyle``)."""
    names: list[str] = []
    styles: list[str] = []
    if aux.is_file():
        text = aux.read_text("utf-8", errors="replace")
        for group in _BIBDATA.findall(text):
            names += [n.strip() for n in group.split(",") if n.strip()]
        styles = [s.strip() + ".bst" for s in _BIBSTYLE.findall(text) if s.strip()]
    if bcf.is_file():
        names += [s.strip() for s in _BIBER_SOURCE.findall(bcf.read_text("utf-8", errors="replace"))]
    return [n if n.endswith(".bib") else n + ".bib" for n in dict.fromkeys(names)], styles


def _find_in(copy: Path, name: str) -> Path | None:
    """A bibliography database as bibtex finds it: by the name given, from
    the paper's folder (only inside the copy: never a path out of it)."""
    path = (copy / PurePosixPath(name)).resolve()
    return path if path.is_relative_to(copy.resolve()) and path.is_file() else None


def write_tar_gz(target: Path, members: dict[str, Path]) -> None:
    """A .tar.gz that is the same bytes for the same files: sorted names,
    no times, owners or modes of this machine, no name or time in the gzip
    header."""
    with target.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped, \
            tarfile.open(fileobj=zipped, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(members):
            data = members[name].read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))


def _default_name(workspace: Path) -> str:
    """The paper's title (``\\title{…}`` in main.tex) when it has a plain one, else the folder's name."""
    try:
        source = (workspace / "main.tex").read_text("utf-8", errors="replace")
    except OSError:
        source = ""
    title = re.search(r"^[^%\n]*\\title\{([^{}]*)\}", source, re.M)
    text = re.sub(r"\\[A-Za-z]+|[~{}]", " ", title.group(1)) if title else ""
    return " ".join(text.replace("--", "-").split()) or workspace.name or "paper"


def _export(request: ExportRequest) -> ExportResult:
    return export_arxiv(request) if request.format == "arxiv" else export_pdf(request)


EXPORTER = Exporter(
    mode="coauthor",
    formats=[
        ExportFormat("pdf", {"en": "PDF (the paper, built with LaTeX)", "zh-CN": "PDF（用 LaTeX 编译的论文）"}, ".pdf"),
        ExportFormat("arxiv", {"en": "arXiv source archive (.tex, .bib, figures, .bbl)",
                               "zh-CN": "arXiv 源文件包（.tex、.bib、图片、.bbl）"}, ".tar.gz"),
    ],
    export=_export,
    default_name=_default_name,
)
