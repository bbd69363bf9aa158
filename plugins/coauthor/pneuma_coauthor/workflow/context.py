"""The Context Package (docs/design/coauthor.md, "Context package"):
stable global context plus a narrow focus.

Built as a structure, not a long string, so a later version can compress or
reorder it; ``render`` is the one place that turns it into prompt text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pneuma_coauthor.artifacts import ArtifactStore
from pneuma_coauthor.billboard.projections import ThreadView
from pneuma_coauthor.domain.model import TaskView

GLOBAL_DOCS = ("OUTLINE.md", "BRIEF.md", "STYLE.md")
PAD = 6  # lines of surrounding text shown (marked) around a referenced range
MAX_WHOLE_FILE = 400  # lines of an unreferenced file shown whole


@dataclass
class Doc:
    path: str
    text: str
    revision: str


@dataclass
class Focus:
    path: str
    revision: str
    text: str  # the whole file as read (patches are computed against it)
    line_start: int  # the range the task is about (1-based, inclusive)
    line_end: int
    explicit: bool  # the person pointed at it (vs. chosen by heuristic)

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def numbered(self, pad: int = PAD) -> str:
        lines = self.lines
        lo = max(1, self.line_start - pad)
        hi = min(len(lines), self.line_end + pad)
        out = []
        for n in range(lo, hi + 1):
            mark = ">" if self.line_start <= n <= self.line_end else " "
            out.append(f"{mark}{n:5d}| {lines[n - 1]}")
        return "\n".join(out)


@dataclass
class ContextPackage:
    task: TaskView
    docs: dict[str, Doc] = field(default_factory=dict)  # OUTLINE/BRIEF/STYLE that exist
    missing: list[str] = field(default_factory=list)  # of those, the absent ones
    focus: list[Focus] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # every watched file, for orientation
    history: list[str] = field(default_factory=list)  # earlier plans, feedback, rejections
    rebase_note: str | None = None

    def revisions(self) -> dict[str, str]:
        out = {d.path: d.revision for d in self.docs.values()}
        out.update({f.path: f.revision for f in self.focus})
        return out

    def focus_for(self, path: str) -> Focus | None:
        return next((f for f in self.focus if f.path == path), None)

    def render(self) -> str:
        parts = [f"<task id=\"{self.task.task_id}\" priority=\"{self.task.priority.value}\">\n{self.task.intent}\n</task>"]
        if self.task.intent_data:
            parts.append(f"<request-kind>{self.task.intent_data}</request-kind>")
        for name in GLOBAL_DOCS:
            doc = self.docs.get(name)
            if doc is not None:
                parts.append(f"<document path=\"{name}\">\n{doc.text}\n</document>")
        if self.missing:
            parts.append("<missing>" + ", ".join(self.missing) + " does not exist in this workspace.</missing>")
        parts.append("<files>\n" + "\n".join(self.files) + "\n</files>")
        for f in self.focus:
            kind = "selected by the person" if f.explicit else "chosen as the likely focus"
            parts.append(
                f"<focus path=\"{f.path}\" lines=\"{f.line_start}-{f.line_end}\" note=\"{kind}; lines marked > are the "
                f"range, the others surround it; {len(f.lines)} lines in the file\">\n{f.numbered()}\n</focus>"
            )
        if self.history:
            parts.append("<thread>\n" + "\n".join(self.history) + "\n</thread>")
        if self.rebase_note:
            parts.append(f"<drift>{self.rebase_note}</drift>")
        return "\n\n".join(parts)


def build_context(task: TaskView, store: ArtifactStore, thread: ThreadView | None, extra_files: list[str] | None = None) -> ContextPackage:
    package = ContextPackage(task=task)
    for name in GLOBAL_DOCS:
        text, revision = store.read(name)
        if text is None:
            package.missing.append(name)
        else:
            package.docs[name] = Doc(name, text, revision)
    package.files = store.list_files()
    seen: set[str] = set()
    for ref in task.artifact_refs:
        text, revision = store.read(ref.path)
        if text is None:
            text = ""
        n = max(1, len(text.splitlines()))
        start, end = (ref.range.line_start, ref.range.line_end) if ref.range else (1, n)
        package.focus.append(Focus(ref.path, revision, text, min(start, n), min(max(end, start), n), True))
        seen.add(ref.path)
    for path in extra_files or []:
        if path in seen or path in GLOBAL_DOCS:
            continue
        text, revision = store.read(path)
        text = text or ""
        package.focus.append(Focus(path, revision, text, 1, max(1, len(text.splitlines())), False))
        seen.add(path)
    if not package.focus:
        # No pointer: the most recently edited section is the likeliest focus
        # (the simple focus heuristic); the plan may name other files.
        newest = store.newest(["sections/**/*.tex", "chapters/**/*.tex", "*.tex"])
        if newest:
            text, revision = store.read(newest)
            text = text or ""
            lines = text.splitlines()
            package.focus.append(Focus(newest, revision, text, 1, max(1, min(len(lines), MAX_WHOLE_FILE)), False))
    if thread is not None:
        package.history = _history(thread)
    return package


def _history(thread: ThreadView) -> list[str]:
    out = []
    for event in thread.events:
        p = event.payload
        if event.type == "AgentPlanPosted":
            out.append(f"[plan] goal: {p.goal}; questions: {p.questions}")  # type: ignore[attr-defined]
        elif event.type == "UserFeedbackPosted":
            out.append(f"[person, {p.kind}] {p.text}")  # type: ignore[attr-defined]
        elif event.type == "PatchRejected":
            out.append(f"[person rejected {p.patch_id}] {p.reason or '(no reason given)'}")  # type: ignore[attr-defined]
        elif event.type == "PatchProposed":
            out.append(f"[proposed {p.patch_id}] {p.summary}")  # type: ignore[attr-defined]
        elif event.type == "TaskNeedsRebase":
            out.append(f"[not applied: {p.patch_id}] {p.reason}")  # type: ignore[attr-defined]
    return out


# -- the figure rule (docs/design/coauthor.md, "Figure rule") ----------------------------------

_FIGURE_WORDS = re.compile(r"\b(fig(ure)?s?|plot|chart|graph|diagram|image|caption)\b", re.I)
_INCLUDE = re.compile(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}")
_FIGREF = re.compile(r"\\(?:auto|c|C)?ref\{(fig:[^}]+)\}|\b(fig:[\w:-]+)")
_FIGPATH = re.compile(r"\b(figures/[\w./-]+)")


def figure_questions(package: ContextPackage, answered: bool) -> list[str]:
    """Blocking questions about figures nobody has described.

    The system must never guess what a figure or result shows: when a task
    is about a figure and neither BRIEF.md ("Figures and tables") nor the
    person has described it, the task blocks with a question. ``answered``:
    the person already replied in the thread, so their words are the facts.
    """
    if answered:
        return []
    intent = package.task.intent
    focus_text = "\n".join(
        "\n".join(f.lines[f.line_start - 1 : f.line_end]) for f in package.focus if f.explicit
    )
    about_figure = bool(_FIGURE_WORDS.search(intent)) or bool(_INCLUDE.search(focus_text))
    if not about_figure:
        return []
    figures = set(_INCLUDE.findall(focus_text)) | set(_FIGPATH.findall(intent))
    labels = {a or b for a, b in _FIGREF.findall(intent + "\n" + focus_text)}
    brief = package.docs.get("BRIEF.md")
    described = _described_figures(brief.text if brief else "")
    if not figures and not labels:
        if described and _FIGURE_WORDS.search(intent) and len(described) == 1:
            return []  # the only figure there is, and it is described
        return ["Which figure does this task concern, and what does it show? I will not describe a figure from guesses."]
    questions = []
    for fig in sorted(figures):
        stem = fig.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if not any(stem in d for d in described):
            questions.append(f"What does {fig} show (axes, conditions, the finding it supports)? BRIEF.md does not describe it.")
    for label in sorted(labels):
        if not any(label in d for d in described):
            questions.append(f"What does the figure labelled {label} show? BRIEF.md does not describe it.")
    return questions


def _described_figures(brief: str) -> list[str]:
    """The bullet lines of BRIEF.md's figures section, one per described figure."""
    match = re.search(r"^#+\s*Figures?\b.*$", brief, re.M | re.I)
    if not match:
        return []
    section = brief[match.end():]
    end = re.search(r"^#+\s", section, re.M)
    section = section[: end.start()] if end else section
    return [line for line in section.splitlines() if line.strip().startswith(("-", "*"))]
