"""When each memory was last given to a reply, on the editor's cards over real HTTP: a recall a
chat turn noted shows on its card; a memory never given to a reply says so."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from memory.long_term import LongTermMemory
from tests.webapp.test_api import Editor

pytestmark = pytest.mark.slow


def test_a_card_says_when_its_memory_was_last_given_to_a_reply(
    base_url: str, data_dir: Path
) -> None:
    editor = Editor(base_url, f"l-{uuid.uuid4().hex[:8]}", data_dir)
    used = editor.send("POST", "memories", {"description": "User likes tea", "theme": "t"})
    unused = editor.send("POST", "memories", {"description": "User has a cat", "theme": "t"})
    memory = LongTermMemory(editor.store, embeddings="off")
    memory.record_recall([used.json()["id"]], "what do I drink?")  # what a chat turn notes
    recalled = memory.recall_stats()[used.json()["id"]].last_recalled
    memory.close()
    cards = {c["id"]: c for g in editor.get("memories").json()["groups"] for c in g["cards"]}
    assert cards[used.json()["id"]]["last_used"] == recalled != ""
    assert cards[unused.json()["id"]]["last_used"] == ""
