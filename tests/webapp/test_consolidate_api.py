"""POST /memories/api/consolidate over real HTTP against a real editor process and YAML files."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.webapp.test_api import Editor

pytestmark = pytest.mark.slow
TEXTS = [
    "User likes jazz",
    "User enjoys jazz music",
    "User lives in Oslo",
    "User has a cat",
    "User reads books",
]


def test_consolidate_merges_reports_and_can_be_undone(base_url: str, data_dir: Path) -> None:
    editor = Editor(base_url, f"c-{uuid.uuid4().hex[:8]}", data_dir)
    ids = [
        editor.send("POST", "memories", {"description": t, "theme": "notes"}).json()["id"]
        for t in TEXTS
    ]
    # The same guard as every write: no CSRF header, no pass.
    forged = editor.http.post(
        "consolidate", content="{}", headers={"Content-Type": "application/json"}
    )
    assert forged.status_code == 403 and editor.get("memories").json()["total"] == 5

    report = editor.send("POST", "consolidate", {}).json()
    assert report["merged"] == {ids[1]: [ids[0]]} and report["kept"] == 4 and not report["refused"]
    assert editor.get("memories").json()["total"] == 4
    deleted = editor.get("deleted").json()["items"]
    assert [d["id"] for d in deleted] == [ids[0]] and deleted[0]["into"] == ids[1]
    assert editor.send("POST", f"memories/{ids[0]}/restore", {}).status_code == 200
    assert editor.send("POST", "consolidate", {"force": True}).status_code == 400


def test_a_refused_pass_says_why_and_changes_nothing(base_url: str, data_dir: Path) -> None:
    editor = Editor(base_url, f"r-{uuid.uuid4().hex[:8]}", data_dir)
    for text in ("User likes tea", "User enjoys tea", "User loves tea", "User has a dog"):
        editor.send("POST", "memories", {"description": text, "theme": "notes"})
    before = editor.file_bytes()
    report = editor.send("POST", "consolidate", {}).json()
    assert "would remove 2 of 4 live memories" in report["refused"] and report["merged"] == {}
    assert editor.file_bytes() == before
