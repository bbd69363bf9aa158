"""Refuse a mode name Pneuma would reject, before any file is written.

`pneuma new-mode` checks the name itself; this covers running cookiecutter
on the template directly.
"""

import re
import sys

NAME = "{{ cookiecutter.name }}"

if not re.fullmatch(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*", NAME):
    sys.stderr.write(
        f"error: {NAME!r} is not a valid mode name: use lowercase letters and digits, "
        "starting with a letter, words joined by single '-' or '_' (e.g. 'kanban', 'lab-notes')\n"
    )
    sys.exit(1)
if re.match(r"pneuma[-_]", NAME):
    sys.stderr.write(
        f"error: leave out the 'pneuma-' prefix: the distribution of mode {NAME[7:]!r} is "
        f"named 'pneuma-{NAME[7:]}' automatically\n"
    )
    sys.exit(1)
