"""The dashboard's data files: CSV and JSON read through the sandbox, typed
as vega's loader types them, bounded in size."""

from __future__ import annotations

from pathlib import Path

import pytest
from pneuma_dashboard.data import infer_type, load_data

from pneuma.api import Sandbox, ToolError

SALES = """\ufeffmonth,region,revenue,orders,returning,note
2024-01,North,1200.5,12,true,
2024-02,North,980,9,false,quiet month
2024-03,"South, coast",1500,,true,"said ""hi"" there"
"""


def _workspace(tmp_path: Path, files: dict[str, str | bytes]) -> Sandbox:
    for name, content in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return Sandbox(tmp_path)


def test_a_csv_is_read_with_its_header_rows_and_vega_types(tmp_path: Path) -> None:
    table = load_data(_workspace(tmp_path, {"data/sales.csv": SALES}), "data/sales.csv")
    assert table.field_names == ["month", "region", "revenue", "orders", "returning", "note"]
    assert {f.name: f.type for f in table.fields} == {
        "month": "date", "region": "string", "revenue": "number", "orders": "integer",
        "returning": "boolean", "note": "string"}
    assert len(table.rows) == 3
    assert table.rows[2] == {"month": "2024-03", "region": "South, coast", "revenue": "1500", "orders": "",
                             "returning": "true", "note": 'said "hi" there'}
    described = table.describe(sample=3)
    assert described["rows"] == 3 and len(described["sample"]) == 3
    # the sample as the page types it: numbers, booleans, null for an empty cell; dates as written
    assert described["sample"][0] == {"month": "2024-01", "region": "North", "revenue": 1200.5, "orders": 12,
                                      "returning": True, "note": None}
    assert described["sample"][2]["orders"] is None
    assert described["fields"][2] == {"name": "revenue", "type": "number"}


def test_a_json_file_is_an_array_of_row_objects(tmp_path: Path) -> None:
    sandbox = _workspace(tmp_path, {
        "data/t.json": '[{"day": "2024-03-01", "n": 3, "ok": true}, {"day": "2024-03-02", "n": 4.5, "extra": "x"}]',
        "data/bad.json": '{"rows": []}',
        "data/broken.json": '[{"a": 1},\n {"a": }]'})
    table = load_data(sandbox, "data/t.json")
    assert [(f.name, f.type) for f in table.fields] == [
        ("day", "date"), ("n", "number"), ("ok", "boolean"), ("extra", "string")]
    with pytest.raises(ToolError, match="must hold an array of row objects") as bad:
        load_data(sandbox, "data/bad.json")
    assert bad.value.code == "E_PARSE_FAIL"
    with pytest.raises(ToolError, match=r"not valid JSON: Expecting value \(line 2, column 8\)"):
        load_data(sandbox, "data/broken.json")


@pytest.mark.parametrize(("values", "expected"), [
    (["1", "2", ""], "integer"),
    (["1", "2.5"], "number"),
    (["0x1F", "1e3", " 7 "], "integer"),
    (["true", "false", None], "boolean"),
    (["2024-01-05", "Mar 3 2024", "2024/02/01"], "date"),
    (["1_000"], "string"),
    (["12 apples"], "string"),
    ([None, None], "boolean"),  # vega's first candidate when nothing says otherwise
])
def test_types_follow_vegas_loader(values: list[str | None], expected: str) -> None:
    assert infer_type(values) == expected


def test_a_file_over_the_limit_names_its_size_and_is_never_read_whole(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PNEUMA_DASHBOARD_MAX_DATA_MB", "1")
    sandbox = _workspace(tmp_path, {"data/big.csv": "a\n" + "1\n" * (1024 * 1024)})
    with pytest.raises(ToolError) as too_big:
        load_data(sandbox, "data/big.csv")
    assert too_big.value.code == "E_TOO_LARGE"
    assert str(too_big.value).startswith("data/big.csv is 2.0 MB; the dashboard reads data files up to 1.0 MB")


def test_paths_go_through_the_sandbox_and_other_formats_are_named(tmp_path: Path) -> None:
    sandbox = _workspace(tmp_path, {"data/x.xlsx": b"PK", "data/latin.csv": "a\nd\xe9j\xe0\n".encode("latin-1"),
                                    "data/t.parquet": b"PAR1"})
    for path, code in (("../etc/passwd.csv", "E_DENY_PATH"), ("data/missing.csv", "E_NOT_FOUND"),
                       ("data/x.xlsx", "E_UNSUPPORTED"), ("data/latin.csv", "E_ENCODING"),
                       ("data/t.parquet", "E_UNSUPPORTED")):
        with pytest.raises(ToolError) as refused:
            load_data(sandbox, path)
        assert refused.value.code == code, path
