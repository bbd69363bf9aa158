"""`pneuma browser-client` as a person starts it, against `pneuma run
--backend native`: both real subprocesses."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp

from tests.native.test_run_native import _start, _stop

PNEUMA = str(Path(sys.executable).parent / "pneuma")


async def _clients(http, base: str, token: str) -> dict:
    async with http.get(f"{base}/api/extension/extension-list",
                        headers={"Authorization": f"Bearer {token}"}) as response:
        assert response.status == 200
        return await response.json()


async def _wait_for(http, base, token, predicate, timeout: float) -> dict:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        listing = await _clients(http, base, token)
        if predicate(listing):
            return listing
        assert loop.time() < deadline, listing
        await asyncio.sleep(0.2)


def _client(listing: dict, client_id: str) -> dict | None:
    return next((c for c in listing["clients"] if c["clientId"] == client_id), None)


async def test_browser_client_process_comes_online_and_goes_offline_when_killed(
        tmp_path, fake_api):
    server, ready = _start(tmp_path / "ws", {"ANTHROPIC_API_KEY": "test-key",
                                             "ANTHROPIC_BASE_URL": fake_api.base_url})
    port, session, token = ready.groups()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["PYTHONUNBUFFERED"] = "1"
    client = subprocess.Popen(
        [PNEUMA, "browser-client", "--server", f"{base}/?session={session}",
         "--token", token, "--client-id", "proc-client", "--name", "Process Chromium"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True)  # its Chromium shares the group: killpg ends them all
    try:
        async with aiohttp.ClientSession() as http:
            listing = await _wait_for(
                http, base, token,
                lambda l: (_client(l, "proc-client") or {}).get("online") is True, 30)
            entry = _client(listing, "proc-client")
            assert entry["kind"] == "browser" and entry["name"] == "Process Chromium"
            assert entry["metadata"]["kind"] == "chromium-headless"
            assert "browser_click" in entry["metadata"]["capabilities"]
            line = client.stdout.readline()
            assert f"browser client proc-client connected to {base}" in line
            assert f"(session {session})" in line
            async with http.get(f"{base}/api/extension/twin?clientId=proc-client",
                                headers={"Authorization": f"Bearer {token}"}) as response:
                twin = (await response.json())["twin"]
            assert twin["windows"] and twin["updatedAt"] > 0

            os.killpg(client.pid, signal.SIGKILL)
            client.wait(10)
            listing = await _wait_for(
                http, base, token,
                lambda l: (_client(l, "proc-client") or {}).get("online") is False, 10)
            assert _client(listing, "proc-client")["lastSeen"] >= entry["connectedAt"]
    finally:
        if client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait(10)
        err = _stop(server)
    assert "Traceback" not in err


def test_browser_client_refuses_a_bad_server_url():
    done = subprocess.run([PNEUMA, "browser-client", "--server", "127.0.0.1:1", "--token", "t"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "--server must be an http(s) URL" in done.stderr
