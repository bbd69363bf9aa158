"""Serve first, check after: on a warm start `pneuma run` answers the page,
its static files, ``/api/session`` and ``/api/config`` as soon as its ready
line is out, while the real server is still being built; every other
request waits for the real server and is answered by it, not refused.

The real server is held back by an import gate: a ``sitecustomize`` on
``PYTHONPATH`` makes ``import pneuma.server.app`` (the first thing the real
server needs, after the checks) wait until a gate file exists. With the
gate shut, only the early server can answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from pneuma.host.paths import web_dir
from tests.pneuma_process import PNEUMA, _started, no_server_left  # noqa: F401 (autouse)

GATE_MODULE = "pneuma.server.app"

SITECUSTOMIZE = '''
import importlib.machinery, os, sys, time

class _WaitingLoader:
    """Runs the module once the gate file exists (at most 60 s). It waits
    in exec_module, which holds that module's lock only: find_spec runs
    under the interpreter's global import lock, and waiting there would
    stop every other thread's imports too."""
    def __init__(self, loader):
        self.loader = loader
    def create_module(self, spec):
        return self.loader.create_module(spec)
    def exec_module(self, module):
        deadline = time.monotonic() + 60
        while not os.path.exists({gate!r}) and time.monotonic() < deadline:
            time.sleep(0.01)
        self.loader.exec_module(module)

class _Gate:
    def find_spec(self, name, path=None, target=None):
        if name != {module!r}:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = _WaitingLoader(spec.loader)
        return spec

sys.meta_path.insert(0, _Gate())
'''


def _gated_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    hooks = tmp_path / "hooks"
    hooks.mkdir(exist_ok=True)
    gate = tmp_path / "gate-open"
    (hooks / "sitecustomize.py").write_text(
        SITECUSTOMIZE.format(module=GATE_MODULE, gate=str(gate)))
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")]))}
    return env, gate


def _run(workspace: Path, env: dict[str, str], backend: str = "none") -> subprocess.Popen:
    proc = subprocess.Popen(
        [PNEUMA, "run", "--mode", "slide", "--workspace", str(workspace), "--backend", backend,
         "--no-open", "--no-prompt", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _started.append(proc)
    return proc


def _ready(proc: subprocess.Popen) -> tuple[str, str, str]:
    """(base URL, token, session id) of the ready line."""
    line = proc.stdout.readline()
    assert line.startswith("[pneuma] ready "), (line, proc.stderr.read() if proc.poll() else "")
    parts = urlsplit(line.split()[-1])
    query = parse_qs(parts.query)
    return f"http://{parts.netloc}", query["token"][0], query["session"][0]


def _stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    return err


def _get(url: str, timeout: float = 10, headers: dict[str, str] | None = None
         ) -> tuple[int, dict[str, str], bytes]:
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _warm_workspace(tmp_path: Path, env: dict[str, str], gate: Path) -> Path:
    """A workspace one start has stamped (the gate open for it)."""
    workspace = tmp_path / "deck"
    gate.touch()
    proc = _run(workspace, env)
    _ready(proc)
    _stop(proc)
    gate.unlink()
    return workspace


def test_a_warm_start_answers_the_page_and_the_session_before_the_server_is_built(tmp_path):
    env, gate = _gated_env(tmp_path)
    workspace = _warm_workspace(tmp_path, env, gate)
    proc = _run(workspace, env)
    base, token, session_id = _ready(proc)
    # The gate is shut: no aiohttp server can exist yet.
    status, headers, body = _get(f"{base}/api/session?token={token}")
    assert status == 200
    early_session = json.loads(body)
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert headers["Set-Cookie"].startswith(f"pneuma_token_{base.rsplit(':', 1)[1]}={token};")
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    status, headers, page = _get(f"{base}/?token={token}")
    assert status == 200 and page == (web_dir() / "index.html").read_bytes()
    assert headers["Content-Type"] == "text/html" and headers["Cache-Control"] == "no-cache"
    status, headers, script = _get(f"{base}/static/app.js?token={token}")
    assert status == 200 and script == (web_dir() / "app.js").read_bytes()
    status, _, config_body = _get(f"{base}/api/config?token={token}")
    assert status == 200
    early_config = json.loads(config_body)
    # A wrong token or another site's page is not the early server's to
    # judge: those wait for the real server's refusal.
    refused: dict[str, int] = {}

    def refuse(name: str, url: str, headers: dict[str, str] | None = None) -> None:
        refused[name] = _get(url, timeout=30, headers=headers)[0]

    wrong = [threading.Thread(target=refuse, args=("token", f"{base}/api/session?token=x")),
             threading.Thread(target=refuse, args=("origin", f"{base}/api/session?token={token}",
                                                   {"Origin": "http://evil.example"}))]
    for thread in wrong:
        thread.start()

    gate.touch()  # the real server comes up; it says the same
    for thread in wrong:
        thread.join(30)
    assert refused == {"token": 401, "origin": 403}
    status, _, body = _get(f"{base}/api/session?token={token}")
    assert status == 200 and json.loads(body) == early_session
    assert early_session["session_id"] == session_id and early_session["backend"] == "none"
    status, _, config_body = _get(f"{base}/api/config?token={token}")
    assert json.loads(config_body) == early_config
    assert early_config["mode"]["name"] == "slide"
    assert early_config["workspace"] == str(workspace.resolve())
    _stop(proc)


def test_a_route_asked_for_at_the_ready_line_waits_for_the_server_and_is_answered(tmp_path):
    env, gate = _gated_env(tmp_path)
    workspace = _warm_workspace(tmp_path, env, gate)
    proc = _run(workspace, env)
    base, token, session_id = _ready(proc)
    answers: dict[str, tuple[int, bytes]] = {}

    def ask(path: str) -> None:
        status, _, body = _get(f"{base}{path}{'&' if '?' in path else '?'}token={token}",
                               timeout=30)
        answers[path] = (status, body)

    asking = [threading.Thread(target=ask, args=(path,))
              for path in ("/content/manifest.json", "/api/files")]
    for thread in asking:
        thread.start()
    # The early server answers what it can meanwhile.
    assert _get(f"{base}/api/session?token={token}")[0] == 200
    gate.touch()
    for thread in asking:
        thread.join(30)
    status, body = answers["/content/manifest.json"]
    assert status == 200 and body == (workspace / "manifest.json").read_bytes()
    status, body = answers["/api/files"]
    assert status == 200 and "manifest.json" in body.decode()
    _stop(proc)


def test_a_first_start_answers_once_its_checks_passed_while_the_server_is_built(tmp_path):
    env, gate = _gated_env(tmp_path)
    workspace = tmp_path / "new-deck"
    proc = _run(workspace, env)  # checks first (nothing stamped), then the ready line
    base, token, session_id = _ready(proc)
    status, _, body = _get(f"{base}/api/session?token={token}")
    assert status == 200 and json.loads(body)["session_id"] == session_id
    status, _, config_body = _get(f"{base}/api/config?token={token}")
    assert status == 200 and json.loads(config_body)["params"] == {
        "slideWidth": 1280, "slideHeight": 720}
    gate.touch()
    status, _, _ = _get(f"{base}/api/files?token={token}", timeout=30)  # the real server
    assert status == 200
    assert json.loads(_get(f"{base}/api/config?token={token}")[2]) == json.loads(config_body)
    _stop(proc)


def test_a_change_still_puts_a_failing_check_before_the_ready_line(tmp_path):
    env, gate = _gated_env(tmp_path)
    workspace = _warm_workspace(tmp_path, env, gate)
    gate.touch()
    (workspace / ".pneuma" / "config.toml").write_text("[params.slide\n")
    proc = _run(workspace, env)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2, err
    assert "[pneuma] ready" not in out
    assert "config.toml" in err and "Traceback" not in err


def test_the_server_import_reads_no_ca_bundle_until_a_client_context_is_used():
    """aiohttp builds two HTTPS client contexts at import; `pneuma run`
    imports it so that their CA certificates are read on first use."""
    script = (
        "import ssl\n"
        "from pneuma.startup.runner import import_aiohttp_web\n"
        "import_aiohttp_web()\n"
        "from aiohttp import connector\n"
        "contexts = [connector._SSL_CONTEXT_VERIFIED, connector._SSL_CONTEXT_UNVERIFIED]\n"
        "before = [ssl.SSLContext.cert_store_stats(c)['x509'] for c in contexts]\n"
        "for c in contexts:\n"
        "    c.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname='example.org')\n"
        "after = [ssl.SSLContext.cert_store_stats(c)['x509'] for c in contexts]\n"
        "default = ssl.create_default_context().cert_store_stats()['x509']\n"
        "verified = contexts[0]\n"
        "print(before, after, default, verified.verify_mode == ssl.CERT_REQUIRED,\n"
        "      verified.check_hostname, contexts[1].verify_mode == ssl.CERT_NONE)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split()
    before, after, default = out[0:2], out[2:4], out[4]
    assert before == ["[0,", "0]"]
    assert after == [f"[{default},", f"{default}]"] and int(default) > 0
    assert out[5:] == ["True", "True", "True"]


def test_what_the_early_server_needs_loads_no_aiohttp():
    """The early server stands in for aiohttp while it is imported: if
    anything it uses imported aiohttp, its first answer would wait for it."""
    script = ("import sys\n"
              "import pneuma.server.early_server, pneuma.server.csp, pneuma.server.persistence\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] == 'aiohttp'))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_a_stop_signal_swallowed_in_a_weakref_callback_stops_quietly():
    """Ctrl-C landing while the main thread runs a weakref callback (the
    import machinery's module-lock cleanup, during the start-up checks) is
    swallowed by Python: it must still stop the start, without the
    "Exception ignored in ..." traceback on the terminal."""
    script = (
        "import os, signal, weakref\n"
        "from pneuma.startup.runner import interrupt_on_stop_signals, stop_signalled\n"
        "interrupt_on_stop_signals()\n"
        "class Lock: pass\n"
        "def cleanup(ref):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    sum(range(1000))  # the handler runs here, inside the callback\n"
        "lock = Lock()\n"
        "ref = weakref.ref(lock, cleanup)\n"
        "del lock\n"
        "print('signalled', stop_signalled())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=30)
    assert done.stdout.strip() == "signalled True"
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_a_stop_signal_right_at_a_first_ready_line_is_a_clean_stop(tmp_path):
    """SIGTERM the moment the ready line is read lands while the event loop
    is being built (the early server answers meanwhile): exit 0, the session
    saved, and no traceback from a half-made loop. Several starts, as a
    supervisor restarting in a loop would."""
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1"}
    for attempt in range(8):
        workspace = tmp_path / f"deck-{attempt}"
        proc = _run(workspace, env)
        _, _, session_id = _ready(proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
        assert proc.returncode == 0, err
        assert "Traceback" not in err and "Exception ignored" not in err, err
        meta = json.loads((workspace / ".pneuma" / "session.json").read_text())
        assert meta["sessionId"] == session_id
