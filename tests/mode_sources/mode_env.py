"""A throwaway virtualenv for installing modes in, so the suite's own .venv
never changes: it sees the .venv's packages (Pneuma, hatchling for
``--no-build-isolation``) through a ``.pth`` file, and pip runs offline
(``PIP_NO_INDEX``), building with what is installed."""

from __future__ import annotations

import json
import os
import signal
import site
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

PNEUMA = str(Path(sys.executable).parent / "pneuma")


@dataclass
class ModeEnv:
    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    def pneuma(self, *args: str, timeout: float = 180,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.python, "-m", "pneuma", *args], capture_output=True,
                              text=True, env={**self.env, **(env or {})}, timeout=timeout,
                              check=False)

    def freeze(self) -> list[str]:
        """What pip says is installed in the throwaway environment itself."""
        out = subprocess.run([self.python, "-m", "pip", "freeze", "--path",
                              str(self.site_packages)], capture_output=True, text=True,
                             env=self.env, check=True, timeout=120).stdout
        return sorted(out.splitlines())

    @property
    def site_packages(self) -> Path:
        return next((self.root / "lib").glob("python3*/site-packages"))

    def modes(self) -> dict[str, dict[str, object]]:
        done = self.pneuma("modes", "--json")
        assert done.returncode == 0, done.stderr
        return {m["name"]: m for m in json.loads(done.stdout)["modes"]}

    def starts(self, mode: str, workspace: Path) -> str:
        """``pneuma run --mode MODE`` reaches its ready line; stopped at once."""
        env = {**self.env, "PNEUMA_LOAD_PLUGINS": mode, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            [self.python, "-m", "pneuma", "run", "--mode", mode, "--workspace", str(workspace),
             "--backend", "none", "--no-open", "--no-prompt", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=20)
        assert line.startswith("[pneuma] ready "), err
        return line


def make_mode_env(root: Path) -> ModeEnv:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True,
                   timeout=120)
    env = ModeEnv(root)
    host_site = site.getsitepackages()[0]
    (env.site_packages / "zz_pneuma_host.pth").write_text(
        f"import site; site.addsitedir({host_site!r})\n", encoding="utf-8")
    env.env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "VIRTUAL_ENV": str(root),
               "PATH": f"{root / 'bin'}:{os.environ.get('PATH', '')}"}
    return env


def new_mode(name: str, parent: Path) -> Path:
    """`pneuma new-mode`'s output for mode ``name``: the package folder."""
    parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([PNEUMA, "new-mode", f"name={name}", "--no-input", "-o", str(parent)],
                   check=True, capture_output=True, timeout=60)
    return parent / f"pneuma-{name}"


def build_wheel(project: Path, dest: Path) -> Path:
    """``pip wheel`` of a project, offline, with the suite's own Python."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(dest), str(project)],
                   check=True, capture_output=True, timeout=120)
    return max(dest.glob("*.whl"), key=lambda path: path.stat().st_mtime)


def git(folder: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                          text=True, env=env, timeout=60).stdout.strip()


def one_line(stderr: str) -> str:
    """The error line, after asserting it is the only ``pneuma: error`` line."""
    errors = [line for line in stderr.splitlines() if line.startswith("pneuma: error:")]
    assert len(errors) == 1, stderr
    return errors[0]
