"""A named model is the model you get: its package and key are checked as its own LangChain
package reads them, at start and in one line; the offline model answers only for the default
model when nobody named one and no key is set."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import os
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import graph.nodes as nodes
import memory.integration.models.loading as loading
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.context import DEFAULT_MODEL, MemoryContext
from memory.integration.models.loading import (
    check_deployment_models,
    check_run_models,
    is_offline,
    load_chat_model,
)
from memory.integration.models.providers import ModelUnavailable
from memory.integration.settings import Settings, use_settings

ROOT = Path(__file__).resolve().parents[2]


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.fixture
def fake_package(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Make a provider package look installed to the check, which looks it up but never
    imports it: the packages themselves are not installed here."""

    def install(module: str) -> None:
        fake = types.ModuleType(module)
        fake.__spec__ = importlib.machinery.ModuleSpec(module, None)
        monkeypatch.setitem(sys.modules, module, fake)

    return install


def test_google_genai_with_google_api_key_is_built_not_replaced_by_the_offline_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    if installed("langchain_google_genai"):
        assert not is_offline(load_chat_model("google_genai/gemini-2.0-flash"))
        return
    with pytest.raises(ModelUnavailable) as raised:
        load_chat_model("google_genai/gemini-2.0-flash")
    assert str(raised.value) == (
        "model google_genai/gemini-2.0-flash needs the langchain-google-genai package: "
        "pip install langchain-google-genai"
    )


def test_google_genai_reads_google_api_key_or_gemini_api_key_never_google_genai_api_key(
    monkeypatch: pytest.MonkeyPatch, fake_package: Callable[[str], None]
) -> None:
    fake_package("langchain_google_genai")
    monkeypatch.setenv("GULFSTREAM_MODEL", "google_genai/gemini-2.0-flash")
    monkeypatch.setenv("GOOGLE_GENAI_API_KEY", "read-by-no-google-library")
    with pytest.raises(ModelUnavailable, match="needs GOOGLE_API_KEY or GEMINI_API_KEY set"):
        check_deployment_models()
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    check_deployment_models()


@pytest.mark.skipif(installed("langchain_anthropic"), reason="langchain-anthropic is installed")
def test_anthropic_without_its_package_fails_at_start_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GULFSTREAM_MODEL", "anthropic/claude-x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with pytest.raises(ModelUnavailable) as raised:
        check_deployment_models()
    assert str(raised.value) == (
        "GULFSTREAM_MODEL=anthropic/claude-x needs the langchain-anthropic package: "
        "pip install langchain-anthropic"
    )


@pytest.mark.parametrize(
    ("provider", "module", "variable"),
    [
        ("anthropic", "langchain_anthropic", "ANTHROPIC_API_KEY"),
        ("mistralai", "langchain_mistralai", "MISTRAL_API_KEY"),
        ("groq", "langchain_groq", "GROQ_API_KEY"),
        ("fireworks", "langchain_fireworks", "FIREWORKS_API_KEY"),
        ("together", "langchain_together", "TOGETHER_API_KEY"),
        ("openai", "langchain_openai", "OPENAI_API_KEY or OPENAI_BASE_URL"),
    ],
)
def test_a_named_provider_with_its_package_but_no_key_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    fake_package: Callable[[str], None],
    provider: str,
    module: str,
    variable: str,
) -> None:
    if not installed(module):
        fake_package(module)
    monkeypatch.setenv("GULFSTREAM_WRITER_MODEL", f"{provider}/some-model")
    package = module.replace("_", "-")
    with pytest.raises(ModelUnavailable) as raised:
        check_deployment_models()
    assert str(raised.value) == (
        f"GULFSTREAM_WRITER_MODEL={provider}/some-model needs {variable} set (read by {package})"
    )
    with pytest.raises(ModelUnavailable, match=variable):
        load_chat_model(f"{provider}/some-model")  # never the offline model instead


@pytest.mark.parametrize(
    ("provider", "module"),
    [
        ("bedrock", "langchain_aws"),
        ("bedrock_converse", "langchain_aws"),
        ("google_vertexai", "langchain_google_vertexai"),
        ("ollama", "langchain_ollama"),
        ("huggingface", "langchain_huggingface"),
    ],
)
def test_providers_that_find_their_own_credentials_are_left_to_their_package(
    monkeypatch: pytest.MonkeyPatch,
    fake_package: Callable[[str], None],
    provider: str,
    module: str,
) -> None:
    fake_package(module)
    monkeypatch.setenv("GULFSTREAM_MODEL", f"{provider}/some-model")
    check_deployment_models()  # no key variable to ask for: the AWS chain, ADC, a local server


def test_an_unknown_provider_is_named_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GULFSTREAM_MODEL", "nosuch/model")
    with pytest.raises(ModelUnavailable, match="LangChain knows no model provider 'nosuch'"):
        check_deployment_models()


def test_the_default_model_with_no_key_is_the_offline_model() -> None:
    assert isinstance(load_chat_model(DEFAULT_MODEL), type(load_chat_model("offline/rules")))
    assert is_offline(load_chat_model(DEFAULT_MODEL, timeout=5.0, max_retries=0))
    check_deployment_models()  # nothing named: nothing to refuse
    check_run_models(MemoryContext())


def test_the_default_model_named_by_the_deployment_needs_its_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GULFSTREAM_MODEL", DEFAULT_MODEL)
    with pytest.raises(ModelUnavailable, match="OPENAI_API_KEY or OPENAI_BASE_URL"):
        check_deployment_models()
    with pytest.raises(ModelUnavailable, match="OPENAI_API_KEY or OPENAI_BASE_URL"):
        load_chat_model(DEFAULT_MODEL)


def test_the_offline_warning_is_said_once_per_process(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(loading, "_told_offline", False)
    with caplog.at_level(logging.WARNING, logger=loading.__name__):
        for timeout, retries in ((None, None), (None, 0), (30.0, 0), (None, None)):
            load_chat_model(DEFAULT_MODEL, timeout=timeout, max_retries=retries)
    assert [r.getMessage() for r in caplog.records].count(caplog.records[0].getMessage()) == 1
    assert "OFFLINE" in caplog.records[0].getMessage() and len(caplog.records) == 1


async def test_a_run_naming_a_model_it_cannot_build_fails_as_it_starts(
    tmp_path: Path,
    clean_process: Settings,
    monkeypatch: pytest.MonkeyPatch,
    fake_package: Callable[[str], None],
) -> None:
    fake_package("langchain_mistralai")

    def never(name: str, **_: Any) -> Any:
        raise AssertionError(f"no model should be loaded, got {name}")

    monkeypatch.setattr(nodes, "load_chat_model", never)
    app = compile_graph(checkpointer=InMemorySaver())
    context = Context(user_id="ada", model="mistralai/mistral-large-latest")
    inline = use_settings(clean_process, memory_backend=f"yaml:{tmp_path}", write_mode="inline")
    with inline, pytest.raises(ValueError) as raised:
        await app.ainvoke(
            {"messages": [{"role": "user", "content": "Hello"}]},
            {"configurable": {"thread_id": "t1"}},
            context=context,
        )
    assert str(raised.value) == (
        "Context.model=mistralai/mistral-large-latest needs MISTRAL_API_KEY set "
        "(read by langchain-mistralai)"
    )


def clean_environment() -> dict[str, str]:
    """This process's environment without model keys or GULFSTREAM_* settings, importing this
    worktree's packages."""
    from tests.conftest import SHELL_VARIABLES

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in SHELL_VARIABLES and not k.startswith("GULFSTREAM_")
    }
    return env | {"PYTHONPATH": str(ROOT)}


@pytest.mark.slow  # a fresh interpreter
@pytest.mark.skipif(installed("langchain_anthropic"), reason="langchain-anthropic is installed")
def test_the_chat_cli_refuses_a_model_it_cannot_build_in_one_line(tmp_path: Path) -> None:
    env = clean_environment() | {"GULFSTREAM_MODEL": "anthropic/claude-x"}
    done = subprocess.run(
        [sys.executable, "-m", "graph.cli.chat", "--data", str(tmp_path / "chat")],
        input="/quit\n", env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "error: GULFSTREAM_MODEL=anthropic/claude-x needs the langchain-anthropic package: "
        "pip install langchain-anthropic"
    ]
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "chat").exists()  # refused before the session opened anything


@pytest.mark.slow  # a fresh interpreter
@pytest.mark.skipif(installed("langchain_anthropic"), reason="langchain-anthropic is installed")
def test_the_server_refuses_to_start_on_a_model_it_cannot_build(tmp_path: Path) -> None:
    env = clean_environment() | {"GULFSTREAM_MODEL": "anthropic/claude-x"}
    code = "import langgraph_api, graph.agent"  # what `langgraph dev` imports as it starts
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.splitlines()[-1] == (
        "memory.integration.models.providers.ModelUnavailable: GULFSTREAM_MODEL=anthropic/"
        "claude-x needs the langchain-anthropic package: pip install langchain-anthropic"
    )
