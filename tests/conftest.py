"""Every test starts from the settings of a clean machine and leaves no writer running."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import memory.integration.run_memory as run_memory
import memory.integration.settings as settings_module
from memory.integration.models.providers import PROVIDERS
from memory.integration.settings import Settings, use_settings
from memory.registry import registry
from memory.writer import breaker, protocols, timeouts
from memory.writer.local import local_writer

# Every model key a provider package reads: one in the developer's shell would make a test pass
# (or fail) on that machine only.
MODEL_KEYS = tuple(sorted({name for _, names in PROVIDERS.values() for name in names}))
SHELL_VARIABLES = ("OPENAI_BASE_URL", "LANGSMITH_LANGGRAPH_API_VARIANT", *MODEL_KEYS)
# GULFSTREAM_* variables that choose which tests run rather than how the app behaves: kept.
TEST_SWITCHES = ("GULFSTREAM_TEST_POSTGRES", "GULFSTREAM_LOCAL_MODEL_TESTS")


def without_the_developers_settings() -> None:
    """The process as on a clean machine before any test module is imported. Importing
    `graph.agent` builds the graph `langgraph dev` serves from the environment and the `.env` of
    the working directory, at collection, before any fixture runs: a forker's `.env` (the minimal
    bot's `GULFSTREAM_CONTEXT_BUDGET_TOKENS=off`) or an exported variable would otherwise change
    the graph the tests check."""
    for name in list(os.environ):
        if name.startswith("GULFSTREAM_") and name not in TEST_SWITCHES:
            del os.environ[name]
    settings_module.DOTENV = os.devnull  # an empty `.env`, wherever pytest runs


def pytest_configure(config: pytest.Config) -> None:
    """Before collection, clear the developer's settings and load the offline embedding model.
    Importing `graph.agent` starts that load in a thread, where numpy reads the weights' headers
    with `ast.literal_eval`; on CPython 3.11.7 that racing pytest's assertion rewriting in the
    main thread can raise "SystemError: AST constructor recursion depth mismatch" (cpython
    gh-106905, fixed in later releases). Loaded first, the thread has nothing left to do."""
    from memory.retrieval.embedder import OfflineEncoder

    without_the_developers_settings()
    if OfflineEncoder.available():
        OfflineEncoder().encode(["warm up"])


def settings_in(folder: Path, **changes: object) -> Settings:
    """The settings of a fresh deployment whose data lives in `folder`: YAML memories, no
    snapshots unless asked for, everything else as on a new machine."""
    base = Settings(
        memory_backend=f"yaml:{folder / 'memory'}", data_dir=str(folder / "data"),
        snapshot_seconds=None,
    )  # fmt: skip
    return base.with_changes(**changes)


@pytest.fixture(autouse=True)
def clean_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """No GULFSTREAM_* variable, model key or `.env` of the developer's shell leaks in; the
    settings point into this test's folder; afterwards the local queues are drained and
    stopped, open memories forgotten and writer breakers reset."""
    for name in list(os.environ):
        if name.startswith("GULFSTREAM_") and name != "GULFSTREAM_TEST_POSTGRES":
            monkeypatch.delenv(name)
    for name in SHELL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(settings_module, "DOTENV", str(tmp_path / "no.env"))
    with use_settings(settings_in(tmp_path)) as settings:
        yield settings
    local_writer.stop(timeout=30)
    registry.clear()
    breaker._breakers.clear()
    protocols.forget_protocol_choices()
    timeouts.pace.clear()
    run_memory._consumers.clear()
