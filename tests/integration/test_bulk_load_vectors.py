"""After a bulk load (restore, import): vectors made before returning when that takes seconds,
else in the background with the editor's status saying retrieval is BM25 only meanwhile."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memory.long_term import LongTermMemory
from memory.registry import MemoryRegistry
from memory.retrieval import semantic
from memory.retrieval.embedder import OfflineEncoder
from memory.retrieval.vector_store import SqliteVectors
from memory.store.factory import open_memory_manager
from memory.store.snapshots import default_snapshot_path, write_snapshot
from webapp import views  # feature: editor

ROOT = Path(__file__).resolve().parents[2]
FACTS = [
    ("User plays jazz piano every evening.", "hobby"),
    ("用户说工作压力很大，睡不好。", "状态"),
    ("The user lives in Porto.", "identity"),
    ("用户喜欢喝绿茶。", "品味"),
    ("The user is training for a half marathon in May.", "sport"),
]


class HeldEncoder(OfflineEncoder):
    """The offline model whose document batches wait until the test lets them through."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        assert self.gate.wait(60)
        return super().embed_documents(texts)


def snapshot_of_facts(folder: Path) -> Path:
    """A snapshot of FACTS where an empty YAML store of user alice in `folder` looks for it."""
    source = open_memory_manager(f"yaml:{folder / 'source'}", "alice")
    for text, theme in FACTS:
        source.add(text, theme)
    target = open_memory_manager(f"yaml:{folder / 'y'}", "alice")
    path = default_snapshot_path(target)
    assert path is not None
    return write_snapshot(source, path)


@pytest.mark.uses("editor")
def test_a_small_restore_is_embedded_before_the_first_reply(tmp_path: Path) -> None:
    snapshot_of_facts(tmp_path)
    memory = MemoryRegistry().open(f"yaml:{tmp_path / 'y'}", "alice", snapshot_delay=None)
    channel = memory.retrievers.semantic
    assert channel is not None
    # Made while opening: the first query finds a paraphrase without waiting for anything.
    assert channel.embedded_count == len(FACTS)
    status = views.status(memory)["recall"]
    assert status["pending"] == 0 and status["embedded"] == status["live"] == len(FACTS)
    assert status["note"] == ""
    found = memory.get_related_memory_from("what music do I like?", "mechanical", limit=1)
    assert [m["description"] for m in found] == [FACTS[0][0]]


@pytest.mark.uses("editor")
def test_a_large_load_says_bm25_only_until_its_vectors_are_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "INLINE_LIMIT", 1)
    monkeypatch.setattr(semantic, "EMBED_BEFORE_RETURN", 2)  # "too many to wait for"
    manager = open_memory_manager(f"yaml:{tmp_path / 'y'}", "alice")
    for text, theme in FACTS:
        manager.add(text, theme)
    encoder = HeldEncoder()
    memory = LongTermMemory(manager, embeddings=encoder)
    assert memory.retrievers.catch_up() is False  # returned without waiting for 5 vectors
    status = views.status(memory)["recall"]
    assert status["pending"] + status["embedded"] == status["live"] == len(FACTS)
    assert status["embedded"] < len(FACTS)
    assert "BM25 only" in status["note"] and "still being made" in status["note"]
    # Words are found meanwhile.
    found = memory.get_related_memory_from("Porto", "mechanical", limit=1)
    assert [m["description"] for m in found] == [FACTS[2][0]]
    encoder.gate.set()
    assert memory.retrievers.catch_up(max_missing=len(FACTS), timeout=60)
    done = views.status(memory)["recall"]
    assert done["pending"] == 0 and done["embedded"] == len(FACTS) and done["note"] == ""


@pytest.mark.uses("editor")
def test_a_failing_embedder_is_named_in_the_status(tmp_path: Path) -> None:
    class Broken(OfflineEncoder):
        name = "offline/broken"

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise RuntimeError("model file unreadable")

    manager = open_memory_manager(f"yaml:{tmp_path / 'y'}", "alice")
    for number in range(semantic.INLINE_LIMIT + 1):  # enough to go to the background thread
        manager.add(f"fact number {number}", "misc")
    memory = LongTermMemory(manager, embeddings=Broken())
    memory.retrievers.catch_up(timeout=60)
    status = views.status(memory)["recall"]
    assert "model file unreadable" in status["note"] and "BM25 only" in status["note"]


def test_the_import_command_embeds_before_it_returns(tmp_path: Path) -> None:
    path = snapshot_of_facts(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GULFSTREAM_")}
    result = subprocess.run(
        [sys.executable, "-m", "memory.integration.admin.snapshot", "import", "--backend",
         f"yaml:{tmp_path / 'y'}", "--user", "alice", "--file", str(path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"imported {len(FACTS)} items" in result.stdout
    assert "vectors made" in result.stdout
    sidecar = tmp_path / "y" / ".alice.vectors.sqlite"
    kept = list(SqliteVectors(sidecar, "alice").load())
    assert len(kept) == len(FACTS)  # the server will load them instead of embedding again


STARTUP_PROBE = """
import threading, time
started = time.perf_counter()
import graph.agent  # what langgraph dev and the CLI import at start
from memory.retrieval.embedder import OfflineEncoder
loading = [t for t in threading.enumerate() if t.name == "offline-embeddings-load"]
for thread in loading:
    thread.join(120)
print(len(loading), OfflineEncoder._model is not None)
"""


@pytest.mark.parametrize(("setting", "expected"), [("", "1 True"), ("off", "0 False")])
def test_the_offline_model_loads_when_the_graph_is_imported(setting: str, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GULFSTREAM_")}
    if setting:
        env["GULFSTREAM_EMBEDDINGS"] = setting
    result = subprocess.run([sys.executable, "-c", STARTUP_PROBE], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=180)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == expected
