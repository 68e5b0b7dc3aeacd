"""Context: defaults, GULFSTREAM_* environment fallbacks, and clear errors for bad values."""

from __future__ import annotations

import pytest

from graph.context import Context


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("GULFSTREAM_"):
            monkeypatch.delenv(name)


def test_defaults() -> None:
    context = Context()
    assert context.user_id == "default"
    assert context.model == "openai/gpt-4o-mini"
    assert context.writer_model == context.model  # the writer follows the chat model by default
    assert context.memory_backend == "yaml:data/memory"
    assert (context.language, context.write_mode, context.retrieval_limit) == ("auto", "auto", 10)
    assert context.memory_scope == "auto"  # the writer picks user or branch per memory


def test_environment_fills_fields_left_at_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GULFSTREAM_RETRIEVAL_LIMIT", "5")
    monkeypatch.setenv("GULFSTREAM_LANGUAGE", "zh")
    monkeypatch.setenv("GULFSTREAM_MEMORY_BACKEND", "store")
    monkeypatch.setenv("GULFSTREAM_WRITER_MODEL", "openai/gpt-4o")
    context = Context()
    assert context.retrieval_limit == 5
    assert context.language == "zh"
    assert context.memory_backend == "store"
    assert context.writer_model == "openai/gpt-4o"


def test_explicit_value_beats_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GULFSTREAM_USER_ID", "from-env")
    assert Context(user_id="alice").user_id == "alice"
    assert Context().user_id == "from-env"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("retrieval_mode", "psychic"),
        ("language", "fr"),
        ("write_mode", "later"),
        ("memory_scope", "thread"),
        ("retrieval_limit", "abc"),
        ("retrieval_limit", 0),
        ("write_delay_seconds", -1),
        ("model", "gpt-4o-mini"),
        ("writer_model", "nomodel"),
        ("user_id", "  "),
    ],
)
def test_invalid_value_names_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        Context(**{field: value})  # type: ignore[arg-type]


def test_invalid_environment_value_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GULFSTREAM_WRITE_DELAY_SECONDS", "soon")
    with pytest.raises(ValueError, match="write_delay_seconds"):
        Context()


def test_a_dict_from_a_client_is_coerced_like_the_server_does() -> None:
    context = Context(**{"retrieval_limit": "3", "write_mode": "SERVER"})  # type: ignore[arg-type]
    assert context.retrieval_limit == 3
    assert context.write_mode == "server"


def test_memory_scope_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GULFSTREAM_MEMORY_SCOPE", "Branch")
    assert Context().memory_scope == "branch"
    assert Context(memory_scope="user").memory_scope == "user"
