"""`make consolidate USER=...` and `/consolidate` in `make chat`, run as a user runs them."""

from __future__ import annotations

from pathlib import Path

from memory.store.backends.yaml_files import YamlMemoryManager
from tests.integration.test_commands import offline_env, run_chat, run_make

JAZZ = [
    "User likes jazz",
    "User enjoys jazz music",
    "User lives in Oslo",
    "User has a cat",
    "User reads books",
]


def test_make_consolidate_merges_a_users_duplicates_and_prints_the_report(tmp_path: Path):
    store = tmp_path / "memory"
    ids = [YamlMemoryManager(str(store), "alice").add(text, "notes") for text in JAZZ]
    done = run_make("consolidate", "USER=alice", env=offline_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "merged 1 memories into 1" in done.stdout and "4 kept" in done.stdout
    assert f"merged {ids[0]} into {ids[1]}" in done.stdout
    assert "snapshot before the pass" in done.stdout
    alice = YamlMemoryManager(str(store), "alice")
    assert alice.get(ids[0], include_deleted=True).deleted and len(alice.list_items()) == 4
    # The other users' stores are untouched, and a refused pass fails the command.
    bob = YamlMemoryManager(str(store), "bob")
    for text in ("User likes tea", "User enjoys tea", "User loves tea", "User has a dog"):
        bob.add(text, "notes")  # two of four would go: over the 25% guard
    refused = run_make("consolidate", "USER=bob", env=offline_env(tmp_path))
    assert refused.returncode != 0 and "consolidation refused" in refused.stdout
    assert len(YamlMemoryManager(str(store), "bob").list_items()) == 4


def test_chat_consolidate_reports_what_it_did(tmp_path: Path):
    manager = YamlMemoryManager(str(tmp_path / "memory"), "default")
    for text in JAZZ:
        manager.add(text, "notes")
    done = run_chat(tmp_path, "/consolidate\n/memories\n/quit\n")
    assert done.returncode == 0, done.stderr
    assert "consolidation: merged 1 memories into 1" in done.stdout
    listed = done.stdout.split("consolidation:", 1)[1]
    assert "User enjoys jazz music" in listed and "User likes jazz\n" not in listed
