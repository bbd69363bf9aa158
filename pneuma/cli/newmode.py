"""``pneuma new-mode``: a new mode package from the cookiecutter template.

The template lives in the repository's ``templates/cookiecutter-pneuma-mode``
and ships in the wheel as ``pneuma/_templates/cookiecutter-pneuma-mode``
(``pneuma.host.paths.templates_dir``). Its one prompt is ``name``; everything
else (distribution ``pneuma-<name>``, package ``pneuma_<name>``, display
name) is derived from it inside ``cookiecutter.json``.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pneuma.host.paths import templates_dir

TEMPLATE_NAME = "cookiecutter-pneuma-mode"
DEFAULT_NAME = "mymode"
_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


class NewModeError(ValueError):
    """A name, an option or the output directory that cannot be used."""


@dataclass(frozen=True)
class ModeNames:
    """Every name derived from the one the author chose."""

    name: str  # the mode: `pneuma run --mode NAME`, and the entry point's name

    @property
    def hyphenated(self) -> str:
        return self.name.replace("_", "-")

    @property
    def underscored(self) -> str:
        return self.name.replace("-", "_")

    @property
    def distribution(self) -> str:
        return f"pneuma-{self.hyphenated}"

    @property
    def package(self) -> str:
        return f"pneuma_{self.underscored}"


def template_path() -> Path:
    path = templates_dir() / TEMPLATE_NAME
    if not (path / "cookiecutter.json").is_file():
        raise NewModeError(f"the mode template is missing from this installation ({path})")
    return path


def check_name(name: str) -> ModeNames:
    """The derived names, or NewModeError saying what is wrong with ``name``."""
    if not _NAME.fullmatch(name):
        raise NewModeError(
            f"{name!r} is not a valid mode name: use lowercase letters and digits, starting "
            "with a letter, with words joined by single '-' or '_' (e.g. 'kanban', 'lab-notes')"
        )
    if re.match(r"pneuma[-_]", name):
        bare = name[len("pneuma-"):]
        raise NewModeError(
            f"leave out the 'pneuma-' prefix: the distribution of mode {bare!r} is named "
            f"'pneuma-{bare.replace('_', '-')}' automatically"
        )
    return ModeNames(name)


def parse_extra_context(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``name=barmode`` (cookiecutter's KEY=VALUE form); a bare word is the name."""
    context: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            key, value = "name", item
        key = key.strip()
        if key != "name":
            raise NewModeError(
                f"unknown template variable {key!r}: the template asks only for 'name' "
                "(everything else is derived from it)"
            )
        context[key] = value.strip()
    return context


def create_mode(name: str, output_dir: Path) -> Path:
    """Render the template for ``name`` into ``output_dir``; the project's path."""
    names = check_name(name)
    output_dir = Path(output_dir)
    target = output_dir / names.distribution
    if target.exists():
        raise NewModeError(
            f"{target} already exists; pick another name or remove it first"
        )
    from pneuma.startup.start_checks import StartProblem, make_folder

    try:
        make_folder(output_dir, "output folder")
    except StartProblem as exc:  # a file in the way, a read-only file system
        raise NewModeError(exc.message) from None

    from cookiecutter.exceptions import CookiecutterException
    from cookiecutter.main import cookiecutter

    # A throwaway config keeps cookiecutter's replay file and clone cache out
    # of the author's home directory.
    with tempfile.TemporaryDirectory(prefix="pneuma-new-mode-") as scratch:
        config = Path(scratch) / "config.yaml"
        config.write_text(
            f"replay_dir: '{Path(scratch) / 'replay'}'\n"
            f"cookiecutters_dir: '{Path(scratch) / 'cookiecutters'}'\n",
            encoding="utf-8",
        )
        try:
            project = cookiecutter(
                str(template_path()),
                no_input=True,
                extra_context={"name": names.name},
                output_dir=str(output_dir),
                config_file=str(config),
            )
        except CookiecutterException as exc:
            raise NewModeError(f"the template failed: {exc}") from exc
        except OSError as exc:  # a read-only folder, a full disk: no half-made project left
            shutil.rmtree(target, ignore_errors=True)
            reason = exc.strerror or (exc.__cause__ and getattr(exc.__cause__, "strerror", None))
            raise NewModeError(f"cannot create {target}: {reason or exc}") from None
    return Path(project)
