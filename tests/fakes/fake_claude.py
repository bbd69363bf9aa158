"""A stand-in for the Claude Code CLI speaking stdio stream-json.

Run as ``python fake_claude.py --print --input-format stream-json ...``. It
reads user lines and control messages from stdin and answers in the shapes
of the real CLI's transcripts (reference/claude-code-stream-json/). What it
does for a user message depends on words in the prompt:

    hello (default)   init, status, stream_events, assistant, result
    tool              text + tool_use blocks of one message id, a tool_result, a second reply
    subagent          stream events and an assistant message under a parent_tool_use_id
    permission        can_use_tool control_request, waits for the control_response
    withdraw          can_use_tool, then control_cancel_request
    crash             a few stderr lines, exit 3
    auth              the CLI's "Invalid API key" assistant message and error result
    authexit          "Invalid API key" on stderr, exit 1
    retry401          api_retry with error_status 401, then waits for an interrupt
    big               a 1 MiB assistant line
    garbage           a line that is not JSON, then a normal reply
    noise             keep_alive, rate_limit_event, an unknown type, then a normal reply
    slow              streams deltas until an interrupt control_request arrives
    write P TEXT      a line of the prompt "write <relative-path> <text…>" (one per line,
                      any number): writes TEXT and a newline to P under its cwd, creating
                      folders, as the real CLI's Write tool does, and answers with the
                      matching Write tool_use, its tool_result and a short reply

Environment:
    FAKE_CLAUDE_LOG         append {"argv"...} at start and {"stdin": msg} per line (JSON lines)
    FAKE_CLAUDE_STATE       directory of known sessions; --resume of an unknown id fails
                            like the real CLI ("No conversation found with session ID")
    FAKE_CLAUDE_RESUME_ECHO when 1, a resumed session first repeats its last
                            assistant message under a new id (as the real CLI may)
    FAKE_CLAUDE_STUBBORN    when 1, ignore SIGTERM and stdin EOF (only SIGKILL ends it)
    FAKE_CLAUDE_AS_ROOT     when 1, refuse bypassPermissions as the real CLI does for root
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import sys
import time
import uuid

ARGS = sys.argv[1:]
LOG = os.environ.get("FAKE_CLAUDE_LOG")
STATE = os.environ.get("FAKE_CLAUDE_STATE")


def flag(name: str) -> str | None:
    return ARGS[ARGS.index(name) + 1] if name in ARGS else None


def record(entry: dict) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def out(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class Stdin:
    """Line reader over fd 0 with timeouts, so streaming can notice an interrupt."""

    def __init__(self) -> None:
        self.buffer = b""
        self.eof = False
        self.backlog: list[dict] = []  # user lines that arrived while busy

    def read(self, timeout: float | None = None) -> dict | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if self.eof:
                return None
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([0], [], [], wait)
            if not ready:
                return None
            chunk = os.read(0, 1 << 20)
            if not chunk:
                self.eof = True
                continue
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        if not line.strip():
            return self.read(timeout)
        message = json.loads(line)
        record({"stdin": message})
        return message


class FakeCLI:
    def __init__(self) -> None:
        self.stdin = Stdin()
        self.model = flag("--model") or "claude-fake-model"
        self.mode = flag("--permission-mode") or "default"
        self.resumed = flag("--resume")
        self.session_id = self.resumed or str(uuid.uuid4())
        self.turn = 0
        self.last_assistant: dict | None = None
        if self.resumed and STATE:
            path = os.path.join(STATE, self.resumed + ".json")
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    self.last_assistant = json.load(f).get("last_assistant")

    # -- plumbing --------------------------------------------------------------

    def known_session(self) -> bool:
        return not STATE or os.path.exists(os.path.join(STATE, self.session_id + ".json"))

    def save(self) -> None:
        if STATE:
            with open(os.path.join(STATE, self.session_id + ".json"), "w", encoding="utf-8") as f:
                json.dump({"last_assistant": self.last_assistant}, f)

    def answer_control(self, message: dict) -> None:
        request = message.get("request", {})
        subtype = request.get("subtype")
        response: dict = {}
        if subtype == "initialize":
            response = {
                "commands": [{"name": "compact", "description": "Compact"}, {"name": "review"}],
                "models": [{"value": "claude-fake-model"}, {"value": "claude-other"}],
            }
        elif subtype == "set_model":
            self.model = request.get("model") or self.model
        elif subtype == "interrupt":
            response = {"still_queued": []}
        out({"type": "control_response",
             "response": {"subtype": "success", "request_id": message["request_id"], "response": response}})

    def next_message(self, timeout: float | None = None) -> dict | None:
        """The next stdin message that is not a control request we answer on the spot."""
        while True:
            message = self.stdin.read(timeout)
            if message is None:
                return None
            if message.get("type") == "control_request" and message["request"].get("subtype") != "interrupt":
                self.answer_control(message)
                continue
            return message

    def wait_for(self, kind: str, timeout: float = 10.0) -> dict | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.next_message(deadline - time.monotonic())
            if message is None:
                if self.stdin.eof:
                    return None
                continue
            if message.get("type") == kind or (kind == "interrupt" and message.get("type") == "control_request"):
                return message
            self.stdin.backlog.append(message)
        return None

    # -- message shapes ----------------------------------------------------------

    def base(self, **extra: object) -> dict:
        return {"session_id": self.session_id, "uuid": str(uuid.uuid4()), **extra}

    def init(self) -> None:
        out({"type": "system", "subtype": "init", "cwd": os.getcwd(), "tools": ["Bash", "Read", "Write", "Edit"],
             "mcp_servers": [], "model": self.model, "permissionMode": self.mode,
             "slash_commands": ["compact", "review"], "claude_code_version": "2.1.330-fake",
             **self.base()})
        out({"type": "system", "subtype": "status", "status": "requesting", **self.base()})

    def stream(self, event: dict, parent: str | None = None) -> None:
        out({"type": "stream_event", "event": event, "parent_tool_use_id": parent, **self.base()})

    def assistant(self, message_id: str, block: dict, parent: str | None = None, **extra: object) -> dict:
        message = {"id": message_id, "type": "message", "role": "assistant", "model": self.model,
                   "content": [block], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 1}}
        out({"type": "assistant", "message": message, "parent_tool_use_id": parent, **self.base(), **extra})
        self.last_assistant = message
        return message

    def text_reply(self, text: str, parent: str | None = None) -> str:
        self.turn += 1
        message_id = f"msg_fake_{uuid.uuid4().hex[:12]}"
        self.stream({"type": "message_start", "message": {"id": message_id, "type": "message",
                     "role": "assistant", "content": [], "model": self.model}}, parent)
        self.stream({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}, parent)
        for i in range(0, len(text), 8):
            self.stream({"type": "content_block_delta", "index": 0,
                         "delta": {"type": "text_delta", "text": text[i:i + 8]}}, parent)
        self.assistant(message_id, {"type": "text", "text": text}, parent)
        self.stream({"type": "content_block_stop", "index": 0}, parent)
        self.stream({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}, parent)
        self.stream({"type": "message_stop"}, parent)
        return message_id

    def result(self, text: str | None, is_error: bool = False, subtype: str = "success", turns: int = 1) -> None:
        out({"type": "result", "subtype": subtype, "is_error": is_error, "duration_ms": 12,
             "duration_api_ms": 8, "num_turns": turns, "result": text, "stop_reason": "end_turn",
             "total_cost_usd": 0.00014, "usage": {"input_tokens": 10, "output_tokens": 5},
             "permission_denials": [], **self.base()})
        self.save()

    def tool_result(self, tool_use_id: str, content: str, is_error: bool = False, parent: str | None = None) -> None:
        block = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        out({"type": "user", "message": {"role": "user", "content": [block]}, "parent_tool_use_id": parent,
             **self.base()})

    # -- behaviours --------------------------------------------------------------

    def handle(self, prompt: str) -> None:
        # Whole words, so that "CoAuthor" in a greeting does not trigger "auth".
        words = set(re.findall(r"[a-z0-9]+", prompt.lower()))
        if "crash" in words:
            err("Error: something went badly wrong")
            err("    at fakeFrame (fake_claude.py:1)")
            sys.exit(3)
        if "authexit" in words:
            err('API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}')
            err("Invalid API key · Please run /login")
            sys.exit(1)
        self.init()
        if self.resumed and self.last_assistant and os.environ.get("FAKE_CLAUDE_RESUME_ECHO") == "1":
            echo = dict(self.last_assistant, id=str(uuid.uuid4()))
            out({"type": "assistant", "message": echo, "parent_tool_use_id": None, **self.base()})
            self.resumed = None
        if "garbage" in words:
            sys.stdout.write("this line is not JSON {\n")
            sys.stdout.flush()
        if "noise" in words:
            out({"type": "keep_alive"})
            out({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}, **self.base()})
            out({"type": "mystery_event", "payload": 1})
            out({"type": "system", "subtype": "hook_response", **self.base()})
            out([1, 2, 3])
        if "auth" in words:
            self.turn += 1
            text = "Invalid API key · Please run /login"
            self.assistant(str(uuid.uuid4()), {"type": "text", "text": text}, error="authentication_failed",
                           is_api_error_message=True)
            self.result(text, is_error=True)
            return
        if "retry401" in words:
            out({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10, "retry_delay_ms": 500,
                 "error_status": 401, "error": "authentication_failed", **self.base()})
            interrupt = self.wait_for("interrupt")
            if interrupt is not None:
                self.answer_control(interrupt)
            self.result(None, is_error=True, subtype="error_during_execution")
            return
        if "big" in words:
            self.turn += 1
            self.assistant(f"msg_big_{uuid.uuid4().hex[:12]}", {"type": "text", "text": "x" * (1024 * 1024)})
            self.result("big done")
            return
        if "slow" in words:
            self.slow()
            return
        writes = re.findall(r"(?m)^write[ \t]+(\S+)[ \t]+(.*)$", prompt)
        if writes:
            self.write_files(writes)
            return
        if "withdraw" in words:
            request_id = str(uuid.uuid4())
            out({"type": "control_request", "request_id": request_id,
                 "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"},
                             "description": "List files", "tool_use_id": "toolu_withdrawn"}})
            out({"type": "control_cancel_request", "request_id": request_id})
            self.result("withdrawn")
            return
        if "permission" in words:
            self.permission()
            return
        if "subagent" in words:
            self.text_reply("Sub-agent at work.", parent="toolu_parent_task")
            self.result("subagent done")
            return
        if "tool" in words:
            self.tool()
            return
        self.text_reply("Hello from the fake CLI!")
        self.result("Hello from the fake CLI!")

    def tool(self) -> None:
        self.turn += 1
        message_id = f"msg_tool_{uuid.uuid4().hex[:12]}"
        self.assistant(message_id, {"type": "text", "text": "I'll create the file."})
        self.assistant(message_id, {"type": "tool_use", "id": "toolu_write_1", "name": "Write",
                                    "input": {"file_path": "hello.txt", "content": "hello world\n"}})
        out({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_write_1", "type": "tool_result", "content": "File created successfully"},
            {"tool_use_id": "toolu_read_2", "type": "tool_result", "content": "no such file", "is_error": True},
        ]}, "parent_tool_use_id": None, "tool_use_result": {"type": "create"}, **self.base()})
        self.text_reply("done")
        self.result("done", turns=2)

    def write_files(self, writes: list[tuple[str, str]]) -> None:
        """Each (path, text) as the Write tool does it: the file written,
        then a tool_use and its tool_result naming its absolute path."""
        self.turn += 1
        message_id = f"msg_write_{uuid.uuid4().hex[:12]}"
        self.assistant(message_id, {"type": "text", "text": "Writing the file(s)."})
        for index, (rel, text) in enumerate(writes, 1):
            path = os.path.join(os.getcwd(), rel)
            existed = os.path.exists(path)
            tool_id = f"toolu_write_{uuid.uuid4().hex[:8]}_{index}"
            self.assistant(message_id, {"type": "tool_use", "id": tool_id, "name": "Write",
                                        "input": {"file_path": path, "content": text + "\n"}})
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            self.tool_result(tool_id, f"The file {path} has been updated successfully." if existed
                             else f"File created successfully at: {path}")
        self.text_reply(f"Wrote {len(writes)} file(s).")
        self.result(f"Wrote {len(writes)} file(s).", turns=2)

    def permission(self) -> None:
        self.turn += 1
        tool_input = {"file_path": "/workspace/allowed.txt", "content": "ok\n"}
        self.assistant(f"msg_perm_{uuid.uuid4().hex[:12]}", {"type": "tool_use", "id": "toolu_perm_1", "name": "Write",
                                                  "input": tool_input})
        request_id = str(uuid.uuid4())
        out({"type": "control_request", "request_id": request_id,
             "request": {"subtype": "can_use_tool", "tool_name": "Write", "display_name": "Write",
                         "input": tool_input, "description": "allowed.txt",
                         "permission_suggestions": [{"type": "setMode", "mode": "acceptEdits"}],
                         "tool_use_id": "toolu_perm_1"}})
        answer = self.wait_for("control_response", timeout=20)
        if answer is None or answer["response"].get("request_id") != request_id:
            err(f"expected the control_response for {request_id}, got {answer!r}")
            self.result(None, is_error=True, subtype="error_during_execution")
            return
        decision = answer["response"]["response"]
        if decision.get("behavior") == "allow":
            self.tool_result("toolu_perm_1", "allowed: " + json.dumps(decision.get("updatedInput"), sort_keys=True))
            self.result("allowed", turns=2)
        else:
            self.tool_result("toolu_perm_1", decision.get("message", ""), is_error=True)
            self.result("denied", turns=2)

    def slow(self) -> None:
        self.turn += 1
        message_id = f"msg_slow_{uuid.uuid4().hex[:12]}"
        self.stream({"type": "message_start", "message": {"id": message_id, "content": []}})
        self.stream({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        sent = ""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            word = f"word{len(sent) // 6} "
            sent += word
            self.stream({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}})
            message = self.next_message(0.02)
            if message is None:
                continue
            if message.get("type") == "control_request":  # the interrupt
                self.answer_control(message)
                self.assistant(message_id, {"type": "text", "text": sent})
                out({"type": "user", "message": {"role": "user", "content": [
                    {"type": "text", "text": "[Request interrupted by user]"}]}, "parent_tool_use_id": None,
                    **self.base()})
                self.result(None, is_error=True, subtype="error_during_execution", turns=1)
                return
            self.stdin.backlog.append(message)
        self.result(sent)

    def run(self) -> None:
        while True:
            message = self.stdin.backlog.pop(0) if self.stdin.backlog else self.next_message()
            if message is None:
                break
            kind = message.get("type")
            if kind == "control_request":
                self.answer_control(message)
                continue
            if kind != "user":
                continue
            if self.resumed and not self.known_session():
                # What the real CLI does for an id it has no transcript for.
                out({"type": "result", "subtype": "error_during_execution", "is_error": True, "num_turns": 0,
                     "duration_ms": 0, "result": None, "total_cost_usd": 0, **self.base()})
                err(f"No conversation found with session ID: {self.resumed}")
                sys.exit(1)
            content = message["message"]["content"]
            prompt = content if isinstance(content, str) else " ".join(
                b.get("text", "") for b in content if b.get("type") == "text")
            self.handle(prompt)


def main() -> None:
    stubborn = os.environ.get("FAKE_CLAUDE_STUBBORN") == "1"
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    env = {k: os.environ.get(k) for k in ("PNEUMA_API", "PNEUMA_TOKEN", "PNEUMA_SESSION_ID", "PNEUMA_MODE",
                                          "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "FAKE_EXTRA")}
    record({"argv": ARGS, "pid": os.getpid(), "cwd": os.getcwd(), "env": env})
    if os.environ.get("FAKE_CLAUDE_AS_ROOT") == "1" and flag("--permission-mode") == "bypassPermissions":
        err("--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons")
        sys.exit(1)
    FakeCLI().run()
    if stubborn:
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
