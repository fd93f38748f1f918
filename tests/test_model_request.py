"""The model request is built in one place: the adapters build the whole request (URL,
method, headers, body) from harness/models/configs.py's WIRE_APIS, and the page, which
keeps the key, adds it with the same table (embed/page/model-apis.mjs, generated from it).
These tests pin both: what each wire API sends, and that the page's endpoint check and
key header are exactly Python's, for the same options."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.models.anthropic_messages import AnthropicMessagesModel
from harness.models.base import ModelRequest
from harness.models.configs import (
    WIRE_APIS,
    AnthropicMessagesConfig,
    OpenAIChatConfig,
    ProviderConfig,
)
from harness.models.http_model import HttpModel
from harness.models.openai_chat import OpenAIChatModel
from harness.transport import HttpRequest

ROOT = Path(__file__).resolve().parents[1]
REQUEST = ModelRequest(system="be brief", messages=[], tools=[])
BASE_URLS = ["https://models.example/v1", "https://models.example/v1/",
             "https://models.example/v1//", "http://127.0.0.1:8080"]


def build(api: str, **options: object) -> HttpRequest:
    config: ProviderConfig
    model: HttpModel
    if api == "openai-chat":
        config = OpenAIChatConfig.model_validate({"model": "m", **options})
        model = OpenAIChatModel(config, transport=None)  # type: ignore[arg-type]
    else:
        config = AnthropicMessagesConfig.model_validate({"model": "m", **options})
        model = AnthropicMessagesModel(config, transport=None)  # type: ignore[arg-type]
    return model.build_request(REQUEST)


def test_every_wire_api_has_a_row():
    assert set(WIRE_APIS) == {"openai-chat", "anthropic-messages"}


def test_openai_chat_request():
    request = build("openai-chat", baseUrl="https://models.example/v1/", apiKey="sk-1",
                    headers={"X-Extra": "1"})
    assert (request.method, request.url) == ("POST", "https://models.example/v1/chat/completions")
    assert request.headers == {"content-type": "application/json",
                               "accept": "text/event-stream",
                               "authorization": "Bearer sk-1", "x-extra": "1"}
    assert json.loads(request.body)["model"] == "m"


def test_anthropic_messages_request():
    request = build("anthropic-messages", apiKey="sk-2")
    assert (request.method, request.url) == ("POST", "https://api.anthropic.com/v1/messages")
    assert request.headers == {"content-type": "application/json",
                               "accept": "text/event-stream",
                               "anthropic-version": "2023-06-01",
                               "anthropic-dangerous-direct-browser-access": "true",
                               "x-api-key": "sk-2"}


@pytest.mark.parametrize("api", sorted(WIRE_APIS))
def test_without_a_key_no_key_header(api):
    """In the browser the worker never has the key: the request it builds carries no
    key header, and the page adds one (below)."""
    request = build(api)
    assert WIRE_APIS[api].key_header not in request.headers
    assert request.url == WIRE_APIS[api].base_url + WIRE_APIS[api].path


@pytest.mark.skipif(sys.platform == "emscripten" or shutil.which("node") is None,
                    reason="needs node and the source tree")
@pytest.mark.parametrize("api", sorted(WIRE_APIS))
def test_the_page_adds_the_key_as_python_would_send_it(api):
    """embed/page/model-apis.mjs, as the page uses it (pyharness.mjs splitSecrets): the URL
    it lets the key go to is the URL the worker's request has, and the header it adds
    is the one Python sends when it holds the key itself (the CLI)."""
    module = (ROOT / "embed" / "page" / "model-apis.mjs").as_uri()
    script = (
        f"import {{ modelEndpoint, keyHeaders, MODEL_APIS }} from {json.dumps(module)};\n"
        f"const api = {json.dumps(api)};\n"
        f"const bases = [MODEL_APIS[api].baseUrl, ...{json.dumps(BASE_URLS)}];\n"
        "console.log(JSON.stringify({ urls: bases.map((b) => modelEndpoint(api, b)),"
        " keyed: keyHeaders(api, 'sk-9'), none: keyHeaders(api, undefined) }));\n")
    out = subprocess.run(["node", "--input-type=module", "-e", script],
                         capture_output=True, text=True, check=True, timeout=60)
    page = json.loads(out.stdout)
    python_urls = [build(api).url] + [build(api, baseUrl=b).url for b in BASE_URLS]
    assert page["urls"] == python_urls
    with_key = build(api, apiKey="sk-9").headers
    without = build(api).headers
    assert page["keyed"] == {k: v for k, v in with_key.items() if k not in without}
    assert page["none"] == {}
