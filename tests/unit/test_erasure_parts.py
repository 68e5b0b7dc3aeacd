"""The parts of erase that decide what goes: which rows carry a memory, which files are a user's."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from memory.erasure.files import snapshots_of, yaml_copies
from memory.erasure.rows import TRACE_TABLES, erase_rows
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.erasure_report import ErasureReport
from memory.store.snapshots import write_snapshot
from memory.text.needles import Needles

FACT = "User lives in Hangzhou, at 18 Wenyi Road"


def test_a_row_carries_the_memory_by_its_id_or_text_even_inside_escaped_json() -> None:
    needles = Needles({"3f2a9b1c"})
    needles.add_texts([FACT, "Tea"])  # a word alone would take unrelated rows: left out
    assert needles.texts == {FACT}
    assert needles.in_row({"arguments": json.dumps({"content": FACT})})  # ensure_ascii escapes
    assert needles.in_row({"result": "deleted 3f2a9b1c"}) is False  # an id only as a whole value
    assert needles.in_row({"memory_id": "3f2a9b1c"})
    assert needles.in_row({"said": FACT[:25]})  # the admission log keeps the start
    assert not needles.in_row({"said": "User lives"})  # too short to tell
    assert not needles.in_row({"arguments": json.dumps({"content": "User likes tea"})})


def test_strip_keeps_the_other_facts_of_a_listing() -> None:
    needles = Needles()
    needles.add_texts([FACT])
    listing = f"User's name is Ada; {FACT}; User has a cat"
    assert needles.without(listing) == "User's name is Ada; User has a cat"
    assert needles.without(FACT) == ""
    assert needles.without("nothing here") == "nothing here"


def test_erase_rows_takes_only_that_users_matching_rows(tmp_path: Path) -> None:
    path = tmp_path / "trace.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE write_trace (user_id, turn_id, step, arguments)")
        db.executemany(
            "INSERT INTO write_trace VALUES (?, ?, ?, ?)",
            [("ada", "t1", 0, FACT), ("ada", "t1", 1, "User has a cat"), ("bob", "t1", 0, FACT)],
        )
    needles = Needles()
    needles.add_texts([FACT])
    assert erase_rows(path, TRACE_TABLES, "ada", needles.in_row) == {"trace: changes": 1}
    with sqlite3.connect(path) as db:
        left = db.execute("SELECT user_id, arguments FROM write_trace ORDER BY user_id").fetchall()
    assert left == [("ada", "User has a cat"), ("bob", FACT)]
    assert erase_rows(path, TRACE_TABLES, "ada", None) == {"trace: changes": 1}
    assert erase_rows(tmp_path / "missing.sqlite", TRACE_TABLES, "ada", None) == {}


def test_a_users_files_are_named_exactly_never_another_users(tmp_path: Path) -> None:
    bob = YamlMemoryManager(tmp_path, "bob")
    bob.add("Likes tea", "food")
    lookalike = "bob.bak-x"  # a valid user id that starts like bob's copies
    YamlMemoryManager(tmp_path, lookalike).add("Likes coffee", "food")
    copy = tmp_path / "bob.bak-20261201T101010123456.yaml"
    copy.write_text("items: {}\n")
    assert yaml_copies(tmp_path, "bob") == [copy]
    write_snapshot(bob, tmp_path / "memory_backup" / "bob.jsonl.gz")
    other = YamlMemoryManager(tmp_path, lookalike)
    write_snapshot(other, tmp_path / "memory_backup" / "bob.before-consolidation-1.jsonl.gz")
    assert [p.name for p in snapshots_of(tmp_path, "bob")] == ["bob.jsonl.gz"]  # by the header


def test_the_report_reads_as_lines() -> None:
    report = ErasureReport("ada", ["3f2a9b1c"])
    report.count("archive: messages", 2)
    report.count("vectors", 0)
    report.notes.append("the checkpoints keep it")
    text = report.describe()
    assert "archive: messages: 2" in text and "vectors" not in text
    assert report.to_dict()["removed"] == {"archive: messages": 2}
