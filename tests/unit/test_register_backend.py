"""A backend of your own, added by argument: `register_backend` names it, and every door that opens
a user's memory by spec (the manager factory, the registry, the run's memory) opens it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

import memory.store.factory as factory
from memory import LongTermMemory, open_memory, register_backend
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.factory import open_memory_manager


class NotesManager(YamlMemoryManager):
    """A stand-in for a fork's own storage: YAML files under the spec's target, counted."""

    opened: ClassVar[list[str]] = []

    def __init__(self, folder: str, user_id: str) -> None:
        super().__init__(folder, user_id)
        NotesManager.opened.append(user_id)


@pytest.fixture
def notes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "_registered", {})
    register_backend("notes", lambda target, user, store: NotesManager(target, user))


def test_a_registered_backend_opens_by_its_spec(notes: None, tmp_path: Path) -> None:
    manager = open_memory_manager(f"notes:{tmp_path}", "ada")
    assert isinstance(manager, NotesManager) and NotesManager.opened[-1] == "ada"
    memory_id = manager.add("The user lives in Porto", "identity")
    memory: LongTermMemory = open_memory(f"notes:{tmp_path}", "ada")
    assert isinstance(memory.manager, NotesManager)
    [found] = memory.get_related_memory_from("Where do I live?", "mechanical", limit=1)
    assert found["id"] == memory_id
    assert (tmp_path / "ada.yaml").exists()  # the fork's storage holds it


@pytest.mark.parametrize("kind", ["yaml", "sqlite", "store", "postgres", "no spaces", ""])
def test_a_built_in_or_malformed_kind_is_refused(notes: None, kind: str) -> None:
    with pytest.raises(ValueError, match="cannot name a new memory backend"):
        register_backend(kind, lambda target, user, store: None)  # type: ignore[arg-type,return-value]


def test_an_unregistered_kind_still_names_the_choices(notes: None) -> None:
    with pytest.raises(ValueError, match="unknown memory backend"):
        open_memory_manager("mongo:x", "ada")


def test_the_user_id_is_checked_before_the_backend_sees_it(notes: None) -> None:
    seen: list[Any] = []
    register_backend("spy", lambda target, user, store: seen.append(user))  # type: ignore[arg-type,return-value,func-returns-value]
    with pytest.raises(ValueError):
        open_memory_manager("spy:x", "../etc")
    assert seen == []
