"""Context (what a run may choose) and Settings (what the deployment chose): defaults,
GULFSTREAM_* environment values, and clear errors for bad values."""

from __future__ import annotations

import re

import pytest

from graph.context import Context
from memory.integration.settings import Settings, get_settings, use_settings


def test_defaults() -> None:
    context = Context()
    assert context.user_id == "default"
    assert context.model == "openai/gpt-4o-mini"
    assert context.writer_model == context.model  # the writer follows the chat model by default
    assert (context.language, context.retrieval_limit) == ("auto", 10)
    assert context.memory_scope == "auto"  # the writer picks user or branch per memory
    settings = Settings()
    assert settings.memory_backend == "yaml:data/memory"
    assert (settings.write_mode, settings.write_delay_seconds) == ("auto", 0)
    assert Settings.from_env({}) == settings  # a new machine: nothing set, the defaults


def test_environment_fills_fields_left_at_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GULFSTREAM_RETRIEVAL_LIMIT", "5")
    monkeypatch.setenv("GULFSTREAM_LANGUAGE", "zh")
    monkeypatch.setenv("GULFSTREAM_MEMORY_BACKEND", "store")
    monkeypatch.setenv("GULFSTREAM_WRITER_MODEL", "openai/gpt-4o")
    context = Context()
    assert context.retrieval_limit == 5
    assert context.language == "zh"
    assert context.writer_model == "openai/gpt-4o"
    assert not hasattr(context, "memory_backend")  # the deployment's, not the run's
    settings = Settings.from_env(
        {"GULFSTREAM_MEMORY_BACKEND": "store", "GULFSTREAM_WRITE_MODE": "server"}
    )
    assert (settings.memory_backend, settings.write_mode) == ("store", "server")


def test_settings_are_read_once_and_swapped_only_by_use_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = get_settings()
    monkeypatch.setenv("GULFSTREAM_WRITE_MODE", "inline")
    assert get_settings() is before  # read once: a later variable changes nothing
    with use_settings(write_mode="inline") as inline:
        assert get_settings() is inline and inline.write_mode == "inline"
        assert inline.memory_backend == before.memory_backend  # the rest is kept
    assert get_settings() is before


def test_explicit_value_beats_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GULFSTREAM_USER_ID", "from-env")
    assert Context(user_id="alice").user_id == "alice"
    assert Context().user_id == "from-env"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("retrieval_mode", "psychic"),
        ("language", "fr"),
        ("memory_scope", "thread"),
        ("retrieval_limit", "abc"),
        ("retrieval_limit", 0),
        ("model", "gpt-4o-mini"),
        ("writer_model", "nomodel"),
        ("user_id", "  "),
    ],
)
def test_invalid_value_names_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=re.escape(f"Context.{field} must")):
        Context(**{field: value})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("memory_backend", "sqlite:/tmp/elsewhere.db"),
        ("write_mode", "inline"),
        ("write_delay_seconds", 5),
        ("writer_thread_secret", "guess"),
        ("data_dir", "/tmp"),
    ],
)
def test_a_run_cannot_choose_a_deployment_setting(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=re.escape(f"Context.{field} is not a run setting")):
        Context(**{field: value})
    with pytest.raises(ValueError, match="Context has no field 'colour'"):
        Context(colour="blue")


@pytest.mark.parametrize(
    ("field", "value", "variable"),
    [
        ("write_mode", "later", "GULFSTREAM_WRITE_MODE"),
        ("write_delay_seconds", -1, "GULFSTREAM_WRITE_DELAY_SECONDS"),
        ("writer_timeout_seconds", 0, "GULFSTREAM_WRITER_TIMEOUT_SECONDS"),
        ("memory_backend", " ", "GULFSTREAM_MEMORY_BACKEND"),
    ],
)
def test_invalid_setting_names_the_variable(field: str, value: object, variable: str) -> None:
    with pytest.raises(ValueError, match=variable):
        Settings(**{field: value})


def test_invalid_environment_value_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="GULFSTREAM_WRITE_DELAY_SECONDS"):
        Settings.from_env({"GULFSTREAM_WRITE_DELAY_SECONDS": "soon"})
    monkeypatch.setenv("GULFSTREAM_RETRIEVAL_LIMIT", "many")
    with pytest.raises(ValueError, match="retrieval_limit"):
        Context()


def test_a_dict_from_a_client_is_coerced_like_the_server_does() -> None:
    context = Context(**{"retrieval_limit": "3", "retrieval_mode": "MECHANICAL"})
    assert context.retrieval_limit == 3
    assert context.retrieval_mode == "mechanical"
    settings = Settings.from_env(
        {"GULFSTREAM_SNAPSHOT_SECONDS": "off", "GULFSTREAM_ALLOWED_MODELS": "a/b, c/d"}
    )
    assert settings.snapshot_seconds is None and settings.allowed_models == ("a/b", "c/d")


def test_memory_scope_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GULFSTREAM_MEMORY_SCOPE", "Branch")
    assert Context().memory_scope == "branch"
    assert Context(memory_scope="user").memory_scope == "user"


def test_the_served_graph_refuses_a_context_the_server_would_drop() -> None:
    """langgraph.json serves a factory: it sees the context as the caller sent it (the server
    drops unknown keys only afterwards) and refuses a misspelled field or a deployment setting
    by name; a context of the graph's own fields gets the graph."""
    from types import SimpleNamespace

    from graph.agent import graph, served_graph

    with pytest.raises(ValueError, match="no field 'usr_id'"):
        served_graph(SimpleNamespace(context={"usr_id": "ada"}))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Context\.memory_backend is not a run setting"):
        served_graph(SimpleNamespace(context={"memory_backend": "yaml:/tmp"}))  # type: ignore[arg-type]
    assert served_graph(SimpleNamespace(context={"user_id": "ada"})) is graph  # type: ignore[arg-type]
    assert served_graph(SimpleNamespace()) is graph  # type: ignore[arg-type]  # schema reads


def test_a_deployment_can_refuse_a_run_that_names_no_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """GULFSTREAM_REQUIRE_USER_ID: a run naming no user would share user `default`'s memories
    with every such caller. On: refused by name; auto: on in a deployed server (its PostgreSQL
    in DATABASE_URI) without custom auth, off under `langgraph dev` and in the CLI."""
    import sys
    from types import SimpleNamespace

    from graph.agent import graph, served_graph

    monkeypatch.delenv("GULFSTREAM_USER_ID", raising=False)
    run = SimpleNamespace(access_context="threads.create_run", context=None)
    read = SimpleNamespace(access_context="assistants.read")
    with use_settings(require_user_id="on"):
        with pytest.raises(ValueError, match=r"Context\.user_id is required"):
            served_graph(run)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"Context\.user_id is required"):
            served_graph(
                SimpleNamespace(
                    access_context="threads.create_run", context={"model": "openai/gpt-4o-mini"}
                )
            )  # type: ignore[arg-type]
        named = SimpleNamespace(access_context="threads.create_run", context={"user_id": "ada"})
        assert served_graph(named) is graph  # type: ignore[arg-type]
        assert served_graph(read) is graph  # type: ignore[arg-type]  # Studio reading the schema
        monkeypatch.setenv("GULFSTREAM_USER_ID", "kiosk")  # the deployment chose the user
        assert served_graph(run) is graph  # type: ignore[arg-type]
        monkeypatch.delenv("GULFSTREAM_USER_ID")
    with use_settings(require_user_id="off"):
        assert served_graph(run) is graph  # type: ignore[arg-type]
    deployed = Settings(require_user_id="auto", platform_database="postgresql://db/app")
    monkeypatch.setitem(sys.modules, "langgraph_api", SimpleNamespace())
    assert deployed.user_id_required()
    assert not deployed.with_changes(platform_database="").user_id_required()  # langgraph dev
    monkeypatch.delitem(sys.modules, "langgraph_api")
    assert not deployed.user_id_required()  # the CLI, a notebook
    with pytest.raises(ValueError, match="GULFSTREAM_REQUIRE_USER_ID"):
        Settings(require_user_id="maybe").user_id_required()
