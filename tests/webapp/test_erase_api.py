"""The editor's erase endpoints over HTTP: refused whole without the confirmation, one user only."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest

from memory.store.backends.yaml_files import YamlMemoryManager

pytestmark = pytest.mark.slow
JSON_WRITE = {"Content-Type": "application/json", "X-Gulfstream-CSRF": "1"}


def client(base_url: str, user: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"{base_url}/memories/api/", timeout=30,
        headers={**JSON_WRITE, "X-Gulfstream-User": user},
    )  # fmt: skip


def test_erase_needs_the_id_confirmed_and_an_existing_memory(base_url: str, data_dir: Path) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    store = YamlMemoryManager(data_dir, user)
    memory_id = store.add("Keeps bees on the roof", "hobbies", "seed")
    with client(base_url, user) as http:
        unconfirmed = http.post(f"memories/{memory_id}/erase", content="{}")
        assert unconfirmed.status_code == 400 and unconfirmed.json()["field"] == "confirm"
        wrong = http.post(f"memories/{memory_id}/erase", content=json.dumps({"confirm": "x"}))
        assert wrong.status_code == 400
        assert store.get(memory_id).description == "Keeps bees on the roof"
        unknown = http.post("memories/nope1234/erase", content=json.dumps({"confirm": "nope1234"}))
        assert unknown.status_code == 404
        done = http.post(f"memories/{memory_id}/erase", content=json.dumps({"confirm": memory_id}))
        assert done.status_code == 200, done.text
        assert done.json()["memory_ids"] == [memory_id]
        assert done.json()["removed"]["yaml store: memories"] == 1
    assert store.all_items() == {}


def test_erase_user_takes_the_callers_data_only(base_url: str, data_dir: Path) -> None:
    alice, bob = f"a-{uuid.uuid4().hex[:8]}", f"b-{uuid.uuid4().hex[:8]}"
    YamlMemoryManager(data_dir, alice).add("Plays the oboe", "music", "seed")
    YamlMemoryManager(data_dir, bob).add("Plays the tuba", "music", "seed")
    with client(base_url, alice) as http:
        refused = http.post("erase-user", content=json.dumps({"confirm": bob}))
        assert refused.status_code == 400  # the confirmation names the caller, nobody else
        done = http.post("erase-user", content=json.dumps({"confirm": alice}))
        assert done.status_code == 200, done.text
        assert done.json()["user_id"] == alice
    assert YamlMemoryManager(data_dir, alice).all_items() == {}
    assert [i.description for i in YamlMemoryManager(data_dir, bob).list_items().values()] == [
        "Plays the tuba"
    ]
