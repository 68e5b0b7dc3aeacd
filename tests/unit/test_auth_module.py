"""memory/integration/auth.py's pure rules: the token list and which store namespaces belong to a
user."""

from __future__ import annotations

import re

import pytest

from memory.integration.auth import owns_namespace, parse_tokens, user_for_token
from memory.integration.settings import Settings, use_settings


def test_token_list_maps_tokens_to_users() -> None:
    assert parse_tokens(" t1:alice , t2:carol.smith,") == {"t1": "alice", "t2": "carol.smith"}


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("t1alice", "GULFSTREAM_AUTH_TOKENS: entry 't1alice'"),
        ("t1:", "entry 't1:'"),
        ("t1:a,t1:b", "listed twice"),
        ("t1:../x", "user_id '../x' is not allowed"),
    ],
)
def test_a_bad_token_list_is_an_error_naming_the_entry(spec: str, named: str) -> None:
    with pytest.raises(ValueError, match=re.escape(named)):
        parse_tokens(spec)


def test_token_lookup() -> None:
    # The deployment's GULFSTREAM_AUTH_TOKENS, read once into the settings.
    settings = Settings.from_env({"GULFSTREAM_AUTH_TOKENS": "t1:alice,t2:bob"})
    assert settings.auth_tokens == "t1:alice,t2:bob"
    with use_settings(settings):
        assert (user_for_token("t2"), user_for_token("t3"), user_for_token("")) == (
            "bob",
            None,
            None,
        )
    assert user_for_token("t2") is None  # other settings, other tokens


@pytest.mark.parametrize(
    ("namespace", "owned"),
    [
        (("memories", "alice"), True),
        (("memories_backup", "alice", "x"), True),
        (("memories", "bob"), False),
        (("memories",), False),
        ((), False),
        (None, False),
        (("alice", "notes"), True),  # the usual (user, ...) layout
        (("bob", "notes"), False),
        (("memories_meta", "alice%2Ex"), False),
        (("memories_pending", "alice"), True),  # turns waiting for their batch
        (("memories_pending", "bob"), False),
        (("memories_pending",), False),
    ],
)
def test_store_namespaces_owned_by_alice(namespace: tuple[str, ...] | None, owned: bool) -> None:
    assert owns_namespace(namespace, "alice") is owned


def test_a_dotted_user_owns_the_escaped_label_and_a_user_named_memories_owns_nothing_else() -> None:
    assert owns_namespace(("memories", "carol%2Esmith"), "carol.smith")
    assert not owns_namespace(("memories", "carol.smith"), "carol.smith")
    assert not owns_namespace(("memories", "bob"), "memories")
    assert not owns_namespace(("memories",), "memories")
