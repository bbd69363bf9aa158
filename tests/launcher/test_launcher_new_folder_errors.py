"""The launcher's "New workspace" on a folder that cannot be made (a file
where one of its parents should be) answers a 4xx naming the file, as
`pneuma run` says it, never `500 E_INTERNAL`; nothing is written
(issue 25, item 15)."""

from __future__ import annotations


async def test_a_new_workspace_below_a_file_is_a_4xx_naming_the_file(launcher, tmp_path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    status, got = await launcher.call("POST", "/api/workspaces/new",
                                      json={"mode": "doc", "path": str(afile / "sub")})
    assert 400 <= status < 500, (status, got)
    assert got["error"]["code"] == "E_CONFLICT"
    assert f"{afile} is a file" in got["error"]["message"]
    assert afile.read_text() == "not a folder\n"
    assert launcher.state.hosting.sessions() == []
