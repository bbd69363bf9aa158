"""The gateway's image side (``pneuma.api.ImageGateway``) against a fake
OpenAI-compatible images endpoint on 127.0.0.1 (tests/fakes/fake_images_api.py)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from pneuma.api import GatewayError, ImageGateway, ImageSettings, load_image_settings
from tests.fakes.fake_images_api import REVISED_SUFFIX, FakeImagesAPI, colour_of

KEY = "sk-img-test-1234567890"


@pytest.fixture
async def fake():
    async with FakeImagesAPI(require_key=KEY) as api:
        yield api


def gateway_for(fake: FakeImagesAPI, env: dict[str, str] | None = None, **overrides) -> ImageGateway:
    values = {"model": "fake-image-1", "base_url": fake.base_url, "api_key_env": "IMG_KEY",
              "configured": True}
    env = {"IMG_KEY": KEY} if env is None else env
    return ImageGateway(ImageSettings(**{**values, **overrides}), env)


def pixel(data: bytes, row: int = -1) -> tuple[int, int, int]:
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(data)).convert("RGB")
    return image.getpixel((0, image.height - 1 if row < 0 else row))


async def test_the_request_is_openai_shaped_and_answers_real_distinct_pngs(fake):
    images = await gateway_for(fake).generate("a red fox in snow", n=2, size="512x256", seed=7)
    body = fake.requests[0]
    assert body == {"model": "fake-image-1", "prompt": "a red fox in snow", "n": 2, "size": "512x256",
                    "response_format": "b64_json", "seed": 7}
    assert fake.paths == ["/v1/images/generations"]
    assert [image.format for image in images] == ["png", "png"]
    assert [pixel(image.data) for image in images] == [colour_of(1, 0), colour_of(1, 1)]
    assert images[0].revised_prompt == "a red fox in snow" + REVISED_SUFFIX


async def test_the_key_comes_from_the_named_variable_only(fake):
    env = {"IMG_KEY": KEY, "OPENAI_API_KEY": "sk-other-key-not-this-one"}
    await gateway_for(fake, env).generate("one")
    assert fake.keys == [f"Bearer {KEY}"]
    with pytest.raises(GatewayError) as refused:
        await gateway_for(fake, {"IMG_KEY": "sk-wrong-key-000000", "OPENAI_API_KEY": KEY}).generate("two")
    assert refused.value.kind == "auth_failed" and refused.value.status == 401
    assert "IMG_KEY" in str(refused.value) and "sk-wrong" not in str(refused.value)
    # An endpoint named for images alone never gets the person's OpenAI key.
    with pytest.raises(GatewayError):
        await gateway_for(fake, {"OPENAI_API_KEY": KEY}, api_key_env=None).generate("three")
    assert fake.keys[-1] == "Bearer no-key"


async def test_a_refused_prompt_is_the_providers_own_words_and_not_retried(fake):
    fake.fail_next(400, "content_policy_violation", "Your request was rejected by the safety system.")
    with pytest.raises(GatewayError) as refused:
        await gateway_for(fake).generate("something refused")
    assert refused.value.kind == "content_policy" and refused.value.status == 400
    assert "rejected by the safety system" in str(refused.value)
    assert len(fake.requests) == 1


async def test_a_server_error_is_tried_once_more_then_reported(fake):
    fake.fail_next(500, "server_error", "The server had an error.", "server_error")
    images = await gateway_for(fake).generate("after a hiccup")
    assert len(images) == 1 and len(fake.requests) == 2
    fake.fail_always(500, "server_error", "Down for good.", "server_error")
    with pytest.raises(GatewayError) as failed:
        await gateway_for(fake).generate("still down")
    assert failed.value.status == 500 and "Down for good" in str(failed.value)
    assert len(fake.requests) == 4  # one retry each, never a storm


async def test_an_unreachable_endpoint_names_its_address():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = ImageSettings(base_url=f"http://127.0.0.1:{port}/v1", model="m", configured=True,
                             max_retries=0)
    with pytest.raises(GatewayError) as failed:
        await ImageGateway(settings, {}).generate("x")
    assert failed.value.kind == "connection_error"
    assert f"127.0.0.1:{port}/v1" in str(failed.value)


async def test_a_slow_endpoint_ends_within_the_timeout(fake):
    fake.delay = 1.0
    with pytest.raises(GatewayError) as failed:
        await gateway_for(fake, request_timeout=0.3, max_retries=0).generate("slow")
    assert failed.value.kind == "timeout" and "0.3 s" in str(failed.value)


async def test_an_image_answered_by_url_is_fetched(fake):
    fake.answer_urls = True
    images = await gateway_for(fake).generate("by url")
    assert images[0].data == fake.images_made[0]


async def test_an_answer_that_is_no_image_is_refused(fake):
    fake.answer_data = b"<html>not an image</html>"
    with pytest.raises(GatewayError) as failed:
        await gateway_for(fake).generate("broken")
    assert failed.value.kind == "invalid_response" and "not a PNG" in str(failed.value)


def test_without_any_setting_the_problem_says_what_to_set(tmp_path: Path):
    settings = load_image_settings(tmp_path, {"HOME": str(tmp_path)})
    assert not settings.configured
    problem = ImageGateway(settings, {}).problem()
    assert problem and "PNEUMA_IMAGES_BASE_URL" in problem and "OPENAI_API_KEY" in problem


async def test_without_a_provider_generate_fails_before_any_request(tmp_path: Path):
    gateway = ImageGateway(load_image_settings(tmp_path, {"HOME": str(tmp_path)}), {})
    with pytest.raises(GatewayError) as failed:
        await gateway.generate("x")
    assert failed.value.kind == "not_configured"


def test_settings_layer_person_file_workspace_file_then_environment(tmp_path: Path):
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (home / ".config" / "pneuma").mkdir(parents=True)
    (home / ".config" / "pneuma" / "images.json").write_text(json.dumps(
        {"baseUrl": "http://127.0.0.1:9/v1", "model": "person-model", "apiKeyEnv": "PERSON_KEY"}))
    (workspace / ".pneuma").mkdir(parents=True)
    (workspace / ".pneuma" / "images.json").write_text(json.dumps({"model": "workspace-model"}))
    settings = load_image_settings(workspace, {"HOME": str(home), "PNEUMA_IMAGES_SIZE": "512x512"})
    assert (settings.base_url, settings.model, settings.api_key_env, settings.size) == (
        "http://127.0.0.1:9/v1", "workspace-model", "PERSON_KEY", "512x512")
    assert settings.configured and settings.provider_name({}) == "127.0.0.1:9"
    assert "PERSON_KEY" in (settings.problem({}) or "")  # named, not set
    assert settings.problem({"PERSON_KEY": "k"}) is None


def test_a_link_planted_at_the_workspace_settings_is_never_read(tmp_path: Path):
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps({"baseUrl": "http://127.0.0.1:9/v1", "model": "planted"}))
    workspace = tmp_path / "ws"
    (workspace / ".pneuma").mkdir(parents=True)
    (workspace / ".pneuma" / "images.json").symlink_to(outside)
    settings = load_image_settings(workspace, {"HOME": str(tmp_path / "home")})
    assert (settings.base_url, settings.model, settings.configured) == (None, "gpt-image-1", False)


def test_a_key_pasted_where_its_variable_name_belongs_is_refused_unechoed(tmp_path: Path):
    settings = load_image_settings(tmp_path, {"HOME": str(tmp_path), "PNEUMA_IMAGES_BASE_URL": "http://127.0.0.1:9/v1",
                                              "PNEUMA_IMAGES_API_KEY_ENV": "sk-proj-abcdef0123456789"})
    problem = settings.problem({}) or ""
    assert "NAME of an environment variable" in problem and "sk-proj" not in problem


def test_openai_itself_needs_its_key_and_gets_no_seed():
    settings = ImageSettings(configured=True)
    assert "OPENAI_API_KEY" in (settings.problem({}) or "")
    assert settings.problem({"OPENAI_API_KEY": "k"}) is None
    assert not settings.sends_seed({}) and settings.provider_name({}) == "openai"
