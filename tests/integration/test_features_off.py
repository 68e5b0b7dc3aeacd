"""Off is off in `make chat`: a feature the deployment turned off leaves nothing of itself in its
banner and commands (real make on a copy of the project). The editor's and MCP's faces:
tests/webapp/test_features_off.py and tests/browser/test_features_off.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.server import copy_app

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ARCHIVE_OFF = {"GULFSTREAM_CONVERSATION_ARCHIVE": "off"}


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GULFSTREAM_", "OPENAI_"))}
    return {**env, "GULFSTREAM_MEMORY_BACKEND": f"yaml:{tmp_path / 'memory'}", **extra}


def make_chat(project: Path, env: dict[str, str], typed: str) -> str:
    """`make chat` in `project` as a user runs it, typing `typed`; what it printed."""
    done = subprocess.run(
        ["make", "-s", "--no-print-directory", "chat", "STAMP=", f"BIN={BIN}"],
        cwd=project, env=env, input=typed, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.uses("archive")
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_chat_offers_no_search_when_the_archive_is_off(tmp_path: Path) -> None:
    project = copy_app(tmp_path / "project")
    shutil.copy2(ROOT / "Makefile", project / "Makefile")
    typed = "/search lake\n/quit\n"
    on = make_chat(project, clean_env(tmp_path), typed)
    banner = on.splitlines()[0]
    assert "/search <text>" in banner
    assert "unknown command" not in on

    off = make_chat(project, clean_env(tmp_path, **ARCHIVE_OFF), typed)
    banner = off.splitlines()[0]
    assert banner.startswith("Gulfstream chat") and "/memories" in banner
    assert "/search" not in banner
    answer = off.split("you> ", 2)[1]  # what /search got
    assert "unknown command" in answer and "/search" not in answer
