"""The illustrate mode's generate_image and vary_image tools, called as the
agent calls them, against the fake OpenAI-compatible images endpoint
(tests/fakes/fake_images_api.py), and the provider status the page and the
terminal show."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pneuma.testing import call_tool, make_workspace, serve
from tests.fakes.fake_images_api import REVISED_SUFFIX, ThreadedFakeImagesAPI, colour_of

KEY = "sk-illustrate-test-0123456789abcdef"
CHOICES = '{"fox-1": {"status": "picked", "starred": true, "comment": "keep"}}\n'


@pytest.fixture(scope="module")
def fake() -> Iterator[ThreadedFakeImagesAPI]:
    api = ThreadedFakeImagesAPI(require_key=KEY)
    yield api
    api.close()


@pytest.fixture
def provider(fake: ThreadedFakeImagesAPI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ThreadedFakeImagesAPI:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("PNEUMA_IMAGES_BASE_URL", fake.base_url)
    monkeypatch.setenv("PNEUMA_IMAGES_MODEL", "fake-image-1")
    monkeypatch.setenv("PNEUMA_IMAGES_API_KEY_ENV", "FAKE_IMAGES_KEY")
    monkeypatch.setenv("FAKE_IMAGES_KEY", KEY)
    fake._call(_clear(fake))
    return fake


async def _clear(fake: ThreadedFakeImagesAPI) -> None:
    fake.api.requests.clear()
    fake.api.failing = None


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = make_workspace("illustrate", tmp_path / "ws")
    (root / "choices.json").write_text(CHOICES, encoding="utf-8")
    return root


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".pneuma" not in p.parts}


def board(root: Path) -> dict[str, Any]:
    return json.loads((root / "board.json").read_text(encoding="utf-8"))


def colour(path: Path) -> tuple[int, int, int]:
    image = Image.open(io.BytesIO(path.read_bytes())).convert("RGB")
    return image.getpixel((0, image.height - 1))


def test_a_new_prompt_lands_as_image_record_and_row(provider: ThreadedFakeImagesAPI, workspace: Path) -> None:
    answer = call_tool("illustrate", workspace, "generate_image",
                       {"prompt": "A paper boat on a puddle, watercolour", "row": "Boat", "seed": 41})
    assert "error" not in answer, answer
    [image] = answer["images"]
    assert answer["row"] == "boat" and image["path"] == f"images/{image['id']}.png"
    assert image["id"].startswith("boat-")
    assert colour(workspace / image["path"]) == colour_of(1, 0)
    record = json.loads((workspace / image["record"]).read_text())
    assert record == {"id": image["id"], "prompt": "A paper boat on a puddle, watercolour",
                      "model": "fake-image-1", "provider": provider.base_url.split("/")[2],
                      "size": "1024x1024", "seed": 41, "parent": None, "row": "boat",
                      "created": record["created"],
                      "revised_prompt": "A paper boat on a puddle, watercolour" + REVISED_SUFFIX}
    rows = board(workspace)["rows"]
    assert [row["id"] for row in rows] == ["lighthouse", "fox", "boat"]
    assert rows[-1] == {"id": "boat", "title": "Boat", "prompt": "A paper boat on a puddle, watercolour",
                        "images": [image["id"]]}
    assert (workspace / "choices.json").read_text() == CHOICES
    assert provider.requests()[0]["seed"] == 41
    assert all(KEY not in data.decode("latin-1") for data in files_of(workspace).values())


def test_variants_join_an_existing_row_each_with_its_own_seed(provider: ThreadedFakeImagesAPI,
                                                              workspace: Path) -> None:
    answer = call_tool("illustrate", workspace, "generate_image",
                       {"prompt": "Lighthouse, stormy night", "row": "lighthouse", "n": 3, "size": "512x512"})
    ids = [image["id"] for image in answer["images"]]
    assert len(set(ids)) == 3
    assert board(workspace)["rows"][0]["images"] == ["lighthouse-1", "lighthouse-2", "lighthouse-3", *ids]
    requests = provider.requests()
    seeds = sorted(request["seed"] for request in requests)
    assert [request["n"] for request in requests] == [1, 1, 1]
    assert seeds == [seeds[0], seeds[0] + 1, seeds[0] + 2]
    assert sorted(image["seed"] for image in answer["images"]) == seeds
    assert {request["size"] for request in requests} == {"512x512"}


def test_vary_keeps_the_parent_and_same_seed_regenerates(provider: ThreadedFakeImagesAPI, workspace: Path) -> None:
    again = call_tool("illustrate", workspace, "vary_image", {"id": "fox-1", "same_seed": True})
    varied = call_tool("illustrate", workspace, "vary_image", {"id": "fox-1", "prompt_change": "at night"})
    first, second = provider.requests()
    fox = json.loads((workspace / "images/fox-1.json").read_text())
    assert (first["prompt"], first["seed"], first["size"]) == (fox["prompt"], fox["seed"], fox["size"])
    assert second["prompt"] == fox["prompt"] + "; at night" and second["seed"] != fox["seed"]
    for answer in (again, varied):
        record = json.loads((workspace / answer["images"][0]["record"]).read_text())
        assert record["parent"] == "fox-1" and record["row"] == "fox"
    assert board(workspace)["rows"][1]["images"][2:] == [again["images"][0]["id"], varied["images"][0]["id"]]


def test_a_refused_prompt_writes_nothing_and_says_the_providers_words(provider: ThreadedFakeImagesAPI,
                                                                     workspace: Path) -> None:
    before = files_of(workspace)

    async def refuse_second() -> None:
        provider.api.fail_next(400, "content_policy_violation", "Your request was rejected by the safety system.")

    call_tool("illustrate", workspace, "generate_image", {"prompt": "ok", "row": "boat"})
    after_one = files_of(workspace)
    assert len(after_one) == len(before) + 2
    provider._call(refuse_second())
    error = call_tool("illustrate", workspace, "generate_image", {"prompt": "refused", "n": 2})["error"]
    assert error["code"] == "E_POLICY_VIOLATION" and "rejected by the safety system" in error["message"]
    assert files_of(workspace) == after_one


def test_a_refused_key_names_its_variable(provider: ThreadedFakeImagesAPI, workspace: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_IMAGES_KEY", "sk-wrong-000000000000")
    before = files_of(workspace)
    error = call_tool("illustrate", workspace, "generate_image", {"prompt": "x"})["error"]
    assert error["code"] == "E_UNAUTHORIZED" and "FAKE_IMAGES_KEY" in error["message"]
    assert "sk-wrong" not in json.dumps(error)
    assert files_of(workspace) == before


def test_without_a_provider_the_tool_says_what_to_set(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PNEUMA_IMAGES_BASE_URL", "PNEUMA_IMAGES_MODEL"):
        monkeypatch.delenv(name, raising=False)
    before = files_of(workspace)
    error = call_tool("illustrate", workspace, "generate_image", {"prompt": "x"})["error"]
    assert error["code"] == "E_UNAVAILABLE"
    assert "PNEUMA_IMAGES_BASE_URL" in error["message"] and "OPENAI_API_KEY" in error["message"]
    assert files_of(workspace) == before


def test_bad_arguments_are_refused_before_any_request(provider: ThreadedFakeImagesAPI, workspace: Path) -> None:
    assert call_tool("illustrate", workspace, "generate_image", {"prompt": "x", "n": 5})["error"]["code"] == "E_BAD_ARGS"
    assert call_tool("illustrate", workspace, "vary_image", {"id": "nope-0000"})["error"]["code"] == "E_NOT_FOUND"
    (workspace / "board.json").write_text("{not json")
    assert call_tool("illustrate", workspace, "generate_image", {"prompt": "x"})["error"]["code"] == "E_PARSE_FAIL"
    assert provider.requests() == []


async def test_the_page_and_the_terminal_say_what_to_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PNEUMA_IMAGES_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    async with serve("illustrate", tmp_path / "ws", watch=False) as server:
        status = await (await server.get("/api/illustrate/provider")).json()
    assert status["configured"] is False and status["ready"] is False
    assert "PNEUMA_IMAGES_BASE_URL" in status["what_to_set"]
    lines = [line for line in capsys.readouterr().err.splitlines() if "illustrate" in line]
    assert len(lines) == 1 and "PNEUMA_IMAGES_BASE_URL" in lines[0]
    monkeypatch.setenv("PNEUMA_IMAGES_BASE_URL", "http://user:secret@127.0.0.1:9/v1")
    async with serve("illustrate", tmp_path / "ws", watch=False) as server:
        status = await (await server.get("/api/illustrate/provider")).json()
    assert status["ready"] is True and status["endpoint"] == "http://127.0.0.1:9/v1"
    assert "illustrate" not in capsys.readouterr().err



def test_calls_at_once_lose_no_image_from_the_board(provider: ThreadedFakeImagesAPI, workspace: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda n: call_tool("illustrate", workspace, "generate_image",
                                                    {"prompt": f"kite {n}", "row": "kites"}), range(4)))
    made = {answer["images"][0]["id"] for answer in answers}
    assert set(board(workspace)["rows"][-1]["images"]) == made and len(made) == 4
