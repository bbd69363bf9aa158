"""The runtime: schemas on every call, the unified error model, enabling
tools, policies, and state shared between runtimes (processes)."""

from __future__ import annotations

import json

import pytest
from tool_helpers import FILE_TOOLS, error_code, policies_file, write

from pneuma.core.errors import ERROR_CODES, HTTP_STATUS, ToolError
from pneuma.host.tool_catalogue import host_tool_names
from pneuma.tools.runtime import ToolRuntime, call_tool


def fake(fake_mode, tmp_path, **kwargs) -> ToolRuntime:
    ws = tmp_path / "fake-ws"
    ws.mkdir(exist_ok=True)
    return ToolRuntime(fake_mode, ws, server_url="", server_token="", **kwargs)


def assert_error_shape(result: dict, code: str) -> dict:
    assert set(result) == {"error"}, result
    error = result["error"]
    assert error["code"] == code, result
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], dict)
    assert isinstance(error["recoverable"], bool)
    assert set(error) <= {"code", "message", "details", "hint", "recoverable"}
    return error


# --- every error code, through the runtime ---


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_every_code_passes_through_in_the_contract_shape(fake_mode, tmp_path, code):
    error = assert_error_shape(fake(fake_mode, tmp_path).call("raise_code", {"code": code}),
                               code)
    assert error["details"] == {"why": "test"} and error["hint"] == "a hint"
    assert error["recoverable"] is (code not in {"E_INTERNAL", "E_UNSUPPORTED",
                                                 "E_TOOL_DISABLED"})
    assert code in HTTP_STATUS


def test_real_error_paths_of_the_file_tools(call, ws):
    """Each code the built-in tools and the runtime produce on their own."""
    (ws / "notes" / "bin.txt").write_bytes(b"\xff\xfe\x00bad")
    cases = {
        "E_DENY_PATH": ("read_file", {"path": "../outside.txt"}),
        "E_NOT_FOUND": ("read_file", {"path": "notes/days/nope.md"}),
        "E_IO": ("write_to_file", {"path": "notes/settings.txt/inner.txt", "content": "x",
                                   "dryRun": False}),
        "E_TOO_LARGE": ("read_file", {"path": "notes/days/monday.md", "maxBytes": 5}),
        "E_ENCODING": ("read_file", {"path": "notes/bin.txt"}),
        "E_PARSE_FAIL": None,  # below: a damaged snapshot
        "E_POLICY_VIOLATION": ("write_to_file", {"path": "notes/days/new.md", "content": "x",
                                                 "dryRun": False}),
        "E_TOOL_DISABLED": ("execute_command", {"scriptName": "dev"}),
        "E_UNSUPPORTED": ("no_such_tool", {}),
        "E_BAD_ARGS": ("write_to_file", {"path": "a.txt", "content": "x"}),
    }
    # E_IO needs a real write attempt; turn the diff requirement off for it.
    policies_file(ws).write_text(json.dumps({"policies": {"writeRequiresDiff": False}}))
    assert error_code(call(*cases["E_IO"])) == "E_IO"
    policies_file(ws).unlink()
    for code, case in cases.items():
        if case is None or code == "E_IO":
            continue
        assert_error_shape(call(*case), code)
    # E_PARSE_FAIL: a snapshot whose metadata is damaged.
    snap = write(call, "notes/days/monday.md", "changed\n")["snapshotId"]
    meta = ws / ".pneuma" / "snapshots" / "notes" / f"{snap}.meta.json"
    meta.write_text("{not json")
    assert_error_shape(call("restore_snapshot", {"snapshotId": snap}), "E_PARSE_FAIL")
    # E_CONFLICT: the file changed after the dry run.
    call("write_to_file", {"path": "notes/days/monday.md", "content": "mine\n",
                           "dryRun": True})
    (ws / "notes" / "days" / "monday.md").write_text("someone else\n")
    assert_error_shape(call("write_to_file", {"path": "notes/days/monday.md",
                                              "content": "mine\n", "dryRun": False}),
                       "E_CONFLICT")


def test_internal_errors_are_contained(fake_mode, tmp_path, caplog):
    rt = fake(fake_mode, tmp_path)
    error = assert_error_shape(rt.call("crash", {}), "E_INTERNAL")
    assert "boom" in error["message"] and error["recoverable"] is False
    assert "boom" in caplog.text  # logged with its traceback
    error = assert_error_shape(rt.call("bad_output", {}), "E_INTERNAL")
    assert error["details"]["errors"][0]["field"] == "n"
    assert_error_shape(rt.call("not_a_dict", {}), "E_INTERNAL")
    assert "cannot be loaded" in assert_error_shape(rt.call("missing_handler", {}),
                                                    "E_INTERNAL")["message"]


def test_async_handlers_and_results(fake_mode, tmp_path):
    rt = fake(fake_mode, tmp_path)
    assert rt.call("echo", {"text": "héllo"}) == {"text": "héllo"}
    assert rt.call("aecho", {"x": 1}) == {"async": True, "x": 1}


# --- schemas ---


@pytest.mark.parametrize("args, field", [
    ({}, "text"),
    ({"text": 3}, "text"),
    ({"text": "a", "extra": 1}, "extra"),
    ([], "(root)"),
    ("text", "(root)"),
])
def test_bad_args_name_the_field(fake_mode, tmp_path, args, field):
    error = assert_error_shape(fake(fake_mode, tmp_path).call("echo", args), "E_BAD_ARGS")
    assert error["details"]["field"] == field
    assert field == "(root)" or field in error["message"]


@pytest.mark.parametrize("name, args, field", [
    ("write_to_file", {"path": "a.txt", "content": "x"}, "dryRun"),
    ("write_to_file", {"path": "a.txt", "content": "x", "dryRun": "yes"}, "dryRun"),
    ("write_to_file", {"path": "", "content": "x", "dryRun": True}, "path"),
    ("write_to_file", {"path": "a.txt", "content": "x", "dryRun": True, "mode": "prepend"},
     "mode"),
    ("list_files", {"path": "notes", "globs": ["ok", 3]}, "globs.1"),
    ("read_file", {"path": "notes/settings.txt", "maxBytes": 0}, "maxBytes"),
    ("search_files", {"path": "notes", "regex": "x", "maxMatches": 0}, "maxMatches"),
    ("list_snapshots", {"limit": "10"}, "limit"),  # a negative limit means 50 (contract)
    ("list_snapshots", {"limit": 1001}, "limit"),
    ("restore_snapshot", {"snapshotId": "snap_bad"}, "snapshotId"),
    ("restore_snapshot", {}, "snapshotId"),
    ("replace_in_file", {"path": "notes/settings.txt", "find": "a"}, "replace"),
])
def test_manifest_schemas_are_enforced(call, name, args, field):
    error = assert_error_shape(call(name, args), "E_BAD_ARGS")
    assert error["details"]["field"] == field, error


def test_outputs_of_file_tools_match_their_schemas(call):
    """Every built-in answer is checked against outputSchema by the runtime
    (a mismatch would be E_INTERNAL): run each once."""
    results = {
        "list_files": call("list_files", {"path": "."}),
        "read_file": call("read_file", {"path": "notes/settings.txt"}),
        "write_to_file": call("write_to_file", {"path": "n.txt", "content": "n",
                                                "dryRun": True}),
        "replace_in_file": call("replace_in_file", {"path": "notes/settings.txt",
                                                    "find": "zzz", "replace": "y"}),
        "search_files": call("search_files", {"path": "notes", "regex": "Mood"}),
        "list_snapshots": call("list_snapshots"),
        "restore_snapshot": call("restore_snapshot",
                                 {"snapshotId": "snap_20250101T000000_00000000"}),
    }
    assert error_code(results["restore_snapshot"]) == "E_NOT_FOUND"
    for name in FILE_TOOLS[:-1]:
        assert "error" not in results[name], (name, results[name])


# --- enabling tools and policies ---


def test_dev_only_tools_need_a_flag_or_policy(fake_mode, tmp_path):
    rt = fake(fake_mode, tmp_path)
    for name in ("execute_command", "browser_action", "opt_in"):
        error = assert_error_shape(rt.call(name, {}), "E_TOOL_DISABLED")
        assert error["hint"]
    assert fake(fake_mode, tmp_path, enable_exec=True).call("execute_command", {"a": 1}) == \
        {"a": 1}
    assert error_code(fake(fake_mode, tmp_path, enable_exec=True).call("browser_action", {})) \
        == "E_TOOL_DISABLED"
    assert fake(fake_mode, tmp_path, enable_browser=True).call("browser_action", {}) == {}
    policy = tmp_path / "p.json"
    policy.write_text(json.dumps({"contractVersion": "1.0.0", "mode": "cline", "policies": {
        "tools": {"enable": ["opt_in"], "disable": ["echo"]},
        "execution": {"enabled": True}}}))
    rt = fake(fake_mode, tmp_path, policies_file=policy)
    assert rt.call("opt_in", {}) == {} and rt.call("execute_command", {}) == {}
    assert error_code(rt.call("echo", {"text": "x"})) == "E_TOOL_DISABLED"
    names = {s.name for s in rt.enabled_specs()}
    assert "echo" not in names and {"opt_in", "execute_command"} <= names
    assert "browser_action" not in names


def test_a_mode_offering_every_host_tool_has_the_dev_tools_off_by_default(runtime):
    """The notes mode offers every host tool (and one of its own): all but
    the two dev tools are on without a flag."""
    offered = {s.name for s in runtime.mode.manifest.tools}
    assert set(host_tool_names()) | {"find_note"} == offered, \
        "notes_mode/manifest.json offers every host tool"
    names = {s.name for s in runtime.enabled_specs()}
    assert set(FILE_TOOLS) <= names
    assert not {"execute_command", "browser_action"} & names
    assert names == offered - {"execute_command", "browser_action"}
    assert len(names) == 11


def test_policy_file_precedence_and_errors(fake_mode, tmp_path):
    rt = fake(fake_mode, tmp_path)
    ws = rt.workspace
    assert rt.call("whoami", {})["policies"] == {"writeRequiresDiff": True,
                                                 "snapshotRetention": 50}
    (fake_mode.package_dir / "policies.json").write_text(
        json.dumps({"policies": {"snapshotRetention": 7}}))
    assert rt.call("whoami", {})["policies"]["snapshotRetention"] == 7
    (ws / ".pneuma").mkdir()
    default_file = ws / ".pneuma" / "faketools-policies.json"
    default_file.write_text(json.dumps({"policies": {"writeRequiresDiff": False}}))
    assert rt.call("whoami", {})["policies"] == {"writeRequiresDiff": False,
                                                 "snapshotRetention": 7}
    explicit = tmp_path / "explicit.json"
    explicit.write_text(json.dumps({"snapshotRetention": 3}))  # bare form
    got = fake(fake_mode, tmp_path, policies_file=explicit).call("whoami", {})["policies"]
    assert got == {"writeRequiresDiff": True, "snapshotRetention": 3}
    default_file.write_text("{broken")
    assert error_code(rt.call("whoami", {})) == "E_PARSE_FAIL"
    default_file.write_text(json.dumps({"policies": {"snapshotRetention": "many"}}))
    error = assert_error_shape(rt.call("whoami", {}), "E_BAD_ARGS")
    assert error["details"]["field"] == "policies.snapshotRetention"
    missing = fake(fake_mode, tmp_path, policies_file=tmp_path / "nope.json")
    assert error_code(missing.call("whoami", {})) == "E_NOT_FOUND"


def test_policy_forbidden_dirs_extend_the_sandbox(call, ws):
    (ws / "secret").mkdir()
    (ws / "secret" / "a.txt").write_text("x")
    assert call("read_file", {"path": "secret/a.txt"})["content"] == "x"
    policies_file(ws).write_text(json.dumps({"policies": {"forbiddenDirs": [".git", "secret"]}}))
    assert error_code(call("read_file", {"path": "secret/a.txt"})) == "E_DENY_PATH"
    assert "secret/" not in call("list_files", {"path": "."})["entries"]
    # The host's own forbidden dirs cannot be dropped by a policy.
    assert error_code(call("read_file", {"path": ".pneuma/config.toml"})) == "E_DENY_PATH"


def test_call_tool_never_raises(notes_mode, ws, tmp_path):
    result = call_tool(notes_mode, ws, "read_file", {"path": "notes/settings.txt"})
    assert "content" in result
    bad = tmp_path / "bad.json"
    bad.write_text("[1,")
    assert error_code(call_tool(notes_mode, ws, "read_file", {"path": "x"},
                                policies_file=bad)) == "E_PARSE_FAIL"
    assert error_code(call_tool(notes_mode, ws, 42, {})) == "E_UNSUPPORTED"


def test_params_reach_the_context(fake_mode, tmp_path):
    rt = fake(fake_mode, tmp_path, params={"language": "en"})
    assert rt.call("whoami", {})["params"] == {"language": "en"}


def test_state_is_shared_between_runtimes(notes_mode, ws):
    """A dry run in one runtime (process) lets another one write."""
    one = ToolRuntime(notes_mode, ws, server_url="", server_token="")
    two = ToolRuntime(notes_mode, ws, server_url="", server_token="")
    args = {"path": "notes/days/shared.md", "content": "intro\n"}
    assert one.call("write_to_file", {**args, "dryRun": True})["applied"] is False
    assert two.call("write_to_file", {**args, "dryRun": False})["applied"] is True
    # The record was used up: writing the same content again needs a new dry run.
    assert error_code(one.call("write_to_file", {**args, "dryRun": False})) == \
        "E_POLICY_VIOLATION"


def test_tool_error_rejects_unknown_codes():
    with pytest.raises(ValueError):
        ToolError("E_NOPE", "x")  # type: ignore[arg-type]
