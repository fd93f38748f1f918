"""`pyharness demo` picks its model from the environment, and never prints the key."""

import pytest

from harness.errors import UsageError
from tooling.cli import demo_model


def test_no_model_in_the_environment_is_the_offline_demo():
    model, description = demo_model({"HOME": "/root"})
    assert model is None
    assert "offline" in description and "OPENAI_API_KEY" in description
    assert demo_model({"PYHARNESS_MODEL_API": "scripted", "OPENAI_API_KEY": "sk"})[0] is None


def test_the_usual_provider_keys():
    model, description = demo_model({"OPENAI_API_KEY": "sk-secret"})
    assert model == {"api": "openai-chat", "model": "gpt-4.1-mini", "apiKey": "sk-secret"}
    assert "sk-secret" not in description and "openai-chat gpt-4.1-mini" in description
    model, _ = demo_model({"ANTHROPIC_API_KEY": "ak", "PYHARNESS_MODEL": "claude-opus-4-1"})
    assert model == {"api": "anthropic-messages", "model": "claude-opus-4-1", "apiKey": "ak"}


def test_pyharness_variables_win():
    env = {"PYHARNESS_MODEL_API": "anthropic-messages", "PYHARNESS_API_KEY": "mine",
           "OPENAI_API_KEY": "sk", "ANTHROPIC_API_KEY": "ak"}
    assert demo_model(env)[0] == {"api": "anthropic-messages", "model": "claude-sonnet-4-5",
                                  "apiKey": "mine"}


def test_a_local_server_needs_no_key_but_a_model_name():
    env = {"PYHARNESS_BASE_URL": "http://localhost:11434/v1", "PYHARNESS_MODEL": "qwen2.5-coder"}
    model, description = demo_model(env)
    assert model == {"api": "openai-chat", "model": "qwen2.5-coder",
                     "baseUrl": "http://localhost:11434/v1"}
    assert "no API key" in description
    with pytest.raises(UsageError, match="PYHARNESS_MODEL"):
        demo_model({"PYHARNESS_BASE_URL": "http://localhost:11434/v1"})


def test_an_unknown_wire_api_names_the_choices():
    with pytest.raises(UsageError, match="openai-chat, anthropic-messages or scripted"):
        demo_model({"PYHARNESS_MODEL_API": "gpt"})
