"""The README and docs/ point a newcomer at files: every `graph/…`, `memory/…`, `prompts/…`,
`webapp/…`, `bench/…` or `tests/…` path they name exists (the restructure of 0.2 moved most)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# memory/store/manager.py, memory/integration/writing/, memory/writer/trace.py:UsageLedger
PATH_NAME = r"((?:graph|memory|prompts|webapp|bench|tests|scripts)/[\w./-]*)(?::([\w.]+))?"
PATH = re.compile(f"`{PATH_NAME}`")


def documents() -> list[Path]:
    """What a newcomer reads: the README, docs/ and the web app's README."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return found + [path for path in [ROOT / "webapp/README.md"] if path.exists()]


def named_paths(text: str) -> set[str]:
    return {match.group(1) for match in PATH.finditer(text)}


def test_every_path_the_docs_name_exists() -> None:
    missing = {
        f"{doc.relative_to(ROOT)}: {path}"
        for doc in documents()
        for path in named_paths(doc.read_text(encoding="utf-8"))
        if not (ROOT / path).exists() and "*" not in path and "<" not in path
    }
    assert not missing, sorted(missing)


def test_the_check_reads_paths_as_the_docs_write_them() -> None:
    text = "see `memory/store/manager.py`, `memory/integration/writing/` and `memory/writer/trace.py:UsageLedger`"  # noqa: E501
    assert named_paths(text) == {
        "memory/store/manager.py",
        "memory/integration/writing/",
        "memory/writer/trace.py",
    }
