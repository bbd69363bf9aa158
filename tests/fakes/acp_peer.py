"""A scripted ACP agent for tests: speaks the Agent Client Protocol over
stdio (JSON-RPC 2.0, one message per line), doing what a JSON script says.

    python -m tests.fakes.acp_peer SCRIPT.json

The script::

    {"record": "/tmp/x/received.jsonl",   # every message the peer receives, one a line
     "sessions": "/tmp/x/sessions",        # where sessions are kept across restarts
     "load_session": true,                 # advertise session/load
     "initialize": "hang" | "crash",       # misbehave at the start
     "modes": [{"id": "ask", "name": "Ask"}, ...],
     "before_new_answer": [STEP, ...],     # sent before session/new is answered
     "models": ["m1", "m2"],               # a "model" config option
     "turns": {"KEYWORD": [STEP, ...], ...}}

A prompt runs the steps of the first KEYWORD its text contains (else it
answers "echo: <text>"). Steps: ``{"text": s}``, ``{"thought": s}``,
``{"tool": {...ToolCall}}``, ``{"tool_update": {...}}``, ``{"plan": [entries]}``,
``{"commands": [names]}``, ``{"mode": id}``, ``{"permission": {"toolCall": ..,
"options": ..}}`` (then says "permission: <outcome>"), ``{"write": {"path",
"content"}}`` and ``{"read": {"path", "line", "limit"}}`` (then say what came
back), ``{"raw": line}`` (written as is, ``$SID`` the session id), ``{"fail": message}`` (the
prompt answered with a JSON-RPC error), ``{"sleep": s}``,
``{"recall": true}`` (says the session's earlier prompts), ``{"wait_cancel": s}`` (up to s seconds; a cancel ends the turn as
cancelled), ``{"ignore_cancel": s}``, ``{"crash": code}``, ``{"stop": reason}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any


class Peer:
    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.writer: asyncio.StreamWriter | None = None
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 1000
        self.cancelled = asyncio.Event()
        self.sessions = Path(script.get("sessions") or "/nonexistent")
        self.session_id: str | None = None

    # -- wire -------------------------------------------------------------------

    def write_line(self, line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write_line(json.dumps({"jsonrpc": "2.0", **message}))

    def notify(self, update: dict[str, Any]) -> None:
        self.send({"method": "session/update",
                   "params": {"sessionId": self.session_id, "update": update}})

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self.send({"id": self.next_id, "method": method, "params": params})
        result: dict[str, Any] = await future
        return result

    def record(self, message: dict[str, Any]) -> None:
        path = self.script.get("record")
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(message) + "\n")

    # -- the agent -----------------------------------------------------------------

    async def handle(self, message: dict[str, Any]) -> None:
        self.record(message)
        method = message.get("method")
        if method is None:
            future = self.pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
            return
        params = message.get("params") or {}
        if method == "session/cancel":
            self.cancelled.set()
            return
        try:
            result = await self.answer(method, params)
        except LookupError as exc:
            self.send({"id": message["id"], "error": {"code": -32002, "message": str(exc)}})
            return
        if "id" in message:
            self.send({"id": message["id"], "result": result})

    async def answer(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            behaviour = self.script.get("initialize")
            if behaviour == "hang":
                await asyncio.sleep(3600)
            if behaviour == "crash":
                sys.stderr.write("peer: cannot initialize, giving up\n")
                sys.stderr.flush()
                os._exit(7)
            return {"protocolVersion": 1, "agentCapabilities": {
                "loadSession": bool(self.script.get("load_session")),
                "promptCapabilities": {"image": False}},
                "agentInfo": {"name": "acp-peer", "version": "1"}}
        if method == "session/new":
            self.session_id = f"peer-{os.getpid()}"
            self.save([])
            for step in self.script.get("before_new_answer", []):
                await self.step(step, [])
            return self.session_state()
        if method == "session/load":
            history = self.load(str(params.get("sessionId")))
            self.session_id = str(params["sessionId"])
            for role, text in history:
                kind = "user_message_chunk" if role == "user" else "agent_message_chunk"
                self.notify({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
            return self.session_state()
        if method == "session/prompt":
            return await self.prompt(params)
        if method == "session/set_mode":
            self.notify({"sessionUpdate": "current_mode_update", "currentModeId": params["modeId"]})
            return {}
        if method == "session/set_config_option":
            return {"configOptions": [self.model_option(str(params.get("value")))]}
        raise LookupError(f"the peer does not know {method}")

    def session_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"sessionId": self.session_id}
        if self.script.get("modes"):
            state["modes"] = {"currentModeId": self.script["modes"][0]["id"],
                              "availableModes": self.script["modes"]}
        if self.script.get("models"):
            state["configOptions"] = [self.model_option(self.script["models"][0])]
        return state

    def model_option(self, current: str) -> dict[str, Any]:
        return {"id": "model", "name": "Model", "category": "model", "type": "select",
                "currentValue": current,
                "options": [{"value": m, "name": m} for m in self.script.get("models", [])]}

    def save(self, history: list[list[str]]) -> None:
        if self.sessions.is_dir() and self.session_id:
            (self.sessions / f"{self.session_id}.json").write_text(json.dumps(history))

    def load(self, session_id: str) -> list[list[str]]:
        path = self.sessions / f"{session_id}.json"
        if not path.is_file():
            raise LookupError(f"no session {session_id}")
        history: list[list[str]] = json.loads(path.read_text())
        return history

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        text = " ".join(b.get("text", "") for b in params.get("prompt", []) if isinstance(b, dict))
        self.cancelled.clear()
        steps = next((s for k, s in (self.script.get("turns") or {}).items() if k in text),
                     [{"text": f"echo: {text}"}])
        history = self.load(self.session_id) if (self.sessions / f"{self.session_id}.json").is_file() \
            else []
        history.append(["user", text])
        said: list[str] = []
        stop = "end_turn"
        for step in steps:
            if "recall" in step:  # what the earlier turns of this session were asked
                step = {"text": "recall: " + " | ".join(t for r, t in history[:-1] if r == "user")}
            stop = await self.step(step, said) or stop
            if stop == "cancelled":
                break
        history.append(["agent", "".join(said)])
        self.save(history)
        return {"stopReason": stop}

    async def step(self, step: dict[str, Any], said: list[str]) -> str | None:  # noqa: C901
        if "text" in step:
            said.append(step["text"])
            self.notify({"sessionUpdate": "agent_message_chunk",
                         "content": {"type": "text", "text": step["text"]},
                         **({"messageId": step["messageId"]} if "messageId" in step else {})})
        elif "thought" in step:
            self.notify({"sessionUpdate": "agent_thought_chunk",
                         "content": {"type": "text", "text": step["thought"]}})
        elif "tool" in step:
            self.notify({"sessionUpdate": "tool_call", **step["tool"]})
        elif "tool_update" in step:
            self.notify({"sessionUpdate": "tool_call_update", **step["tool_update"]})
        elif "plan" in step:
            self.notify({"sessionUpdate": "plan", "entries": step["plan"]})
        elif "commands" in step:
            self.notify({"sessionUpdate": "available_commands_update", "availableCommands": [
                {"name": n, "description": n} for n in step["commands"]]})
        elif "mode" in step:
            self.notify({"sessionUpdate": "current_mode_update", "currentModeId": step["mode"]})
        elif "permission" in step:
            answer = await self.request("session/request_permission",
                                        {"sessionId": self.session_id, **step["permission"]})
            outcome = (answer.get("result") or {}).get("outcome") or {}
            said_text = f"permission: {outcome.get('optionId') or outcome.get('outcome')}"
            return await self.step({"text": said_text}, said)
        elif "write" in step:
            answer = await self.request("fs/write_text_file", {"sessionId": self.session_id,
                                                               **step["write"]})
            error = answer.get("error")
            return await self.step({"text": f"write error: {error['message']}" if error
                                    else "write ok"}, said)
        elif "read" in step:
            answer = await self.request("fs/read_text_file", {"sessionId": self.session_id,
                                                              **step["read"]})
            error = answer.get("error")
            return await self.step({"text": f"read error: {error['message']}" if error
                                    else f"read: {answer['result']['content']}"}, said)
        elif "raw" in step:
            self.write_line(step["raw"].replace("$SID", str(self.session_id)))
        elif "fail" in step:
            raise LookupError(step["fail"])
        elif "sleep" in step:
            await asyncio.sleep(step["sleep"])
        elif "wait_cancel" in step:
            try:
                await asyncio.wait_for(self.cancelled.wait(), step["wait_cancel"])
            except asyncio.TimeoutError:
                return None
            return "cancelled"
        elif "ignore_cancel" in step:
            await asyncio.sleep(step["ignore_cancel"])
        elif "crash" in step:
            sys.stderr.write("peer: something went badly wrong\npeer: exiting now\n")
            sys.stderr.flush()
            os._exit(int(step["crash"]))
        elif "stop" in step:
            return str(step["stop"])
        return None


async def main(script_path: str) -> None:
    script = json.loads(Path(script_path).read_text())
    peer = Peer(script)
    peer.record({"method": "_started", "pid": os.getpid()})
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks: set[asyncio.Task[None]] = set()
    while line := await reader.readline():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        task = asyncio.create_task(peer.handle(message))
        tasks.add(task)
        task.add_done_callback(tasks.discard)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
