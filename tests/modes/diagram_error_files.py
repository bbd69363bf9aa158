"""Diagram files with a syntax error, and the file line each error is on:
shared by tests/modes/test_diagram_error_lines.py and
tests/browser/test_diagram_error_lines_viewer.py (issue 25, item 10)."""

from __future__ import annotations

# Each file's broken statement, and the file line it is on. mermaid's own
# number for each is what the real bundle says (test_diagram_error_lines.py asks it).
FENCED = ("---\ntitle: Orders\nconfig:\n  theme: forest\n---\n\n"
          "%%{init: {\"flowchart\": {\"curve\": \"basis\"}}}%%\n\n%% the order path\n"
          "flowchart TD\n  A[Start] --> B\n\n  %% checks\n  B -->> C\n")
FENCED_LINE = 14
MISSPELLED = "---\ntitle: t\n---\n%% what it shows\n\nflowchar TD\n  A --> B\n"
MISSPELLED_LINE = 6
CASES: dict[str, tuple[str, int]] = {
    "plain": ("flowchart TD\n  A --> B\n  B -->> C\n", 3),
    "front matter, directive, comments and blank lines": (FENCED, FENCED_LINE),
    "blank lines after front matter": ("---\ntitle: x\n---\n\n\nflowchart TD\n  A --> B\n  B -->> C\n", 8),
    "directive on the first line": ('%%{init: {"theme":"dark"}}%%\nflowchart TD\n  B -->> C\n', 3),
    "directive in the middle keeps its line": ('flowchart TD\n%%{init: {"theme":"dark"}}%%\n  B -->> C\n', 3),
    "directive over three lines": ('flowchart TD\n%%{init: {\n"theme":"dark"\n}}%%\n  A --> B\n  B -->> C\n', 6),
    "comments in the middle": ("flowchart TD\n  A --> B\n%% hi\n  %% two\n\n  B -->> C\n", 6),
    "blank lines above a comment go with it": ("flowchart TD\n  A --> B\n\n\n%% hi\n  B -->> C\n", 6),
    "a bare %% stays": ("flowchart TD\n  A --> B\n%%\n  B -->> C\n", 4),
    "blank lines at the top": ("\n\n  \nflowchart TD\n  A --> B\n  B -->> C\n", 6),
    "indented front matter": ("  ---\n  title: x\n  ---\nflowchart TD\n%% c\n  B -->> C\n", 6),
    "CR LF": ("---\r\ntitle: x\r\n---\r\n%%{init: {}}%%\r\nflowchart TD\r\n%% c\r\n  B -->> C\r\n", 7),
    "a comment after a statement is not a comment line": ("flowchart TD\n  A --> B %% n\n%% c\n  B -->> C\n", 2),
    "sequence": ("%% c\nsequenceDiagram\n  A->>B: hi\n%% d\n  A-->>>B: x\n", 5),
    "pie (langium)": ('%% c\n\npie\n  "a" : 1\n%% d\n  "b" x 2\n', 6),
    "gitGraph (langium)": ("%% c\ngitGraph\n  commit\n  comit\n", 4),
    "agentflow parses with its comments": ("%% top\n\nagentflow-beta\n%% c\n\n  )))( bad\n", 6),
    "the error at the end of the file": ("%% c\nflowchart TD\n  A --> B\n  subgraph X\n  C --> D\n", 5),
}
