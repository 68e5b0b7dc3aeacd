"""Off is off in the editor and the MCP server: a feature the deployment turned off leaves no
page, link or answer of itself (a real editor process) and no MCP tool (the MCP SDK's client over
stdio). `make chat`: tests/integration/test_features_off.py; the page itself:
tests/browser/test_features_off.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters

from tests.webapp.editor_process import ROOT, run_editor

pytestmark = pytest.mark.slow

ARCHIVE_OFF = {"GULFSTREAM_CONVERSATION_ARCHIVE": "off"}


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GULFSTREAM_", "OPENAI_"))}
    return {**env, "GULFSTREAM_MEMORY_BACKEND": f"yaml:{tmp_path / 'memory'}", **extra}


@pytest.mark.uses("archive")
def test_the_editor_shows_no_conversations_and_says_the_archive_is_off(tmp_path: Path) -> None:
    data_dir = tmp_path / "memory"
    data_dir.mkdir()
    headers = {"X-Gulfstream-User": "ada"}
    with run_editor(data_dir, **ARCHIVE_OFF) as base:
        who = httpx.get(f"{base}/memories/api/whoami", headers=headers, timeout=10).json()
        assert who["features"]["archive"] is False  # the page drops its Conversations link
        page = httpx.get(f"{base}/memories/conversations/", timeout=10)
        assert page.status_code == 404 and "archive is off" in page.text
        search = httpx.get(
            f"{base}/memories/api/conversations", params={"q": "lake"}, headers=headers, timeout=10
        )
        assert search.status_code == 200
        assert search.json()["hits"] == []
        assert any("archive is off" in note for note in search.json()["notes"])
    with run_editor(data_dir) as base:  # the same folder with the archive on: all there
        who = httpx.get(f"{base}/memories/api/whoami", headers=headers, timeout=10).json()
        assert who["features"]["archive"] is True
        assert httpx.get(f"{base}/memories/conversations/", timeout=10).status_code == 200
        search = httpx.get(
            f"{base}/memories/api/conversations", params={"q": "lake"}, headers=headers, timeout=10
        )
        assert search.json() == {"query": "lake", "hits": [], "notes": []}


@pytest.mark.uses("hotness")
def test_the_editor_shows_no_hotness_when_its_half_life_is_zero(tmp_path: Path) -> None:
    data_dir = tmp_path / "memory"
    data_dir.mkdir()
    with run_editor(data_dir, GULFSTREAM_HOTNESS_HALF_LIFE_DAYS="0") as base:
        who = httpx.get(
            f"{base}/memories/api/whoami", headers={"X-Gulfstream-User": "ada"}, timeout=10
        ).json()
        assert who["features"]["hotness"] is False


async def mcp_tools(tmp_path: Path, **extra: str) -> set[str]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webapp.mcp", "--user", "ada"],
        env=clean_env(tmp_path, GULFSTREAM_SNAPSHOT_SECONDS="off", **extra),
        cwd=str(ROOT),
    )
    async with Client(params, read_timeout_seconds=120) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.uses("archive")
async def test_mcp_offers_no_conversation_search_when_the_archive_is_off(tmp_path: Path) -> None:
    assert "search_conversations" in await mcp_tools(tmp_path)
    off = await mcp_tools(tmp_path, **ARCHIVE_OFF)
    assert "search_conversations" not in off
    assert {"search_memories", "remember"} <= off


@pytest.mark.uses("topics")
def test_the_editor_offers_no_grouping_by_topic_when_topics_are_off(tmp_path: Path) -> None:
    data_dir = tmp_path / "memory"
    data_dir.mkdir()
    with run_editor(data_dir, GULFSTREAM_TOPICS="off") as base:
        who = httpx.get(
            f"{base}/memories/api/whoami", headers={"X-Gulfstream-User": "ada"}, timeout=10
        ).json()
        assert who["features"]["topics"] is False  # the page drops "Group by topic"
