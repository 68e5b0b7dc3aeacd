"""A `.env` means the same settings to `make chat` (memory/integration/env_values.py reads it) as
to `langgraph dev` (python-dotenv reads it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import memory.integration.settings as settings_module
from memory.integration.env_values import read_dotenv
from memory.integration.settings import Settings

ROOT = Path(__file__).parents[2]


def minimal_bot_block() -> str:
    """`.env.example`'s minimal bot block uncommented, as docs/CUSTOMIZING.md (section 5) says."""
    block = (ROOT / ".env.example").read_text().split("minimal bot", 1)[1].split("\n\n", 1)[0]
    return "\n".join(line[2:] for line in block.splitlines() if re.match(r"# GULFSTREAM_", line))


def test_the_uncommented_minimal_bot_block_turns_the_features_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text(minimal_bot_block() + "\n")
    assert "  # " in dotenv.read_text()  # the lines keep their comments
    monkeypatch.setattr(settings_module, "DOTENV", str(dotenv))
    minimal = Settings.from_env({})
    assert not (minimal.compaction_on or minimal.archive_on or minimal.admission or minimal.topics)
    assert read_dotenv(dotenv)["GULFSTREAM_CONTEXT_BUDGET_TOKENS"] == "off"


LINES = """\
A=off   # a comment after the value
B=a#b
C="a # b"  # quoted, then a comment
D='x'
export E=v
F=
G=  spaced
H=x #
I= # only a comment
J=sk-abc=def
"""


def test_values_read_as_python_dotenv_reads_them(tmp_path: Path) -> None:
    dotenv_values = pytest.importorskip("dotenv").dotenv_values  # langgraph-cli's dependency
    path = tmp_path / ".env"
    path.write_text(LINES)
    assert read_dotenv(path) == dotenv_values(path)
    assert read_dotenv(path)["A"] == "off" and read_dotenv(path)["C"] == "a # b"
