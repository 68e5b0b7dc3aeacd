"""What the user asks once holds: told in one conversation among 60 other memories, "answer me in
short bullet points, never use emoji" and "以后请叫我小梅" are filed by the offline model as
standing instructions and reach the prompt of a later, unrelated conversation (a movie) through
the real graph; the newest of two names wins; forgetting one stops it at the next turn."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately

import graph.nodes as nodes
from graph.cli.session import LocalSession
from graph.context import Context
from memory.archive import archives  # feature: archive
from memory.integration.models.offline import OfflineChatModel
from memory.integration.settings import use_settings
from memory.registry import registry
from tests.fakes import ScriptedModel

pytestmark = pytest.mark.slow

BULLETS = "From now on, please always answer me in short bullet points and never use emoji."
NAME = "以后请叫我小梅。"
MOVIE = "What did you think of the film Spirited Away?"
BUDGET = 3_000
# 60 ordinary memories in every default section but the instructions', none about films.
FILLER = [
    (f"User's colleague number {n} works on the {('billing', 'search', 'mobile')[n % 3]} team "
     f"and visits {('Lyon', 'Osaka', 'Quito', 'Perth')[n % 4]} every {n % 5 + 2} months",
     ("identity", "moments", "places & paths", "time-bound to-dos")[n % 4])
    for n in range(60)
]  # fmt: skip


@pytest.fixture
def settings(file_backend: str, tmp_path: Path) -> Iterator[Any]:
    with use_settings(
        data_dir=str(tmp_path / "data"), embeddings="off", snapshot_seconds=None,
        memory_backend=file_backend, context_budget_tokens=str(BUDGET), digests=False,
    ) as chosen:  # fmt: skip
        yield chosen
    registry.clear()
    archives.clear()  # feature: archive


def _system_text(prompt: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in prompt if isinstance(m, SystemMessage))


async def test_an_instruction_reaches_an_unrelated_later_turn_and_forgetting_stops_it(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = f"mei-{uuid.uuid4().hex[:8]}"
    async with LocalSession(Context(user_id=user, model="offline/rules"), settings.data_dir) as s:
        for description, theme in FILLER:
            s.manager.add(description, theme, "seeded for the test")
        await s.say("t1", BULLETS)
        await s.say("t1", NAME)
        await s.wait_for_writes()
        filed = {i.description: i.theme for i in s.manager.list_items().values()}
        assert filed[f"User's instruction: {BULLETS.rstrip('.')}"] == "standing instructions"
        assert filed["用户的要求：以后请叫我小梅"] == "长期要求"
        assert len(filed) == 62
        # "About the user" sums up who they are in whole facts: no instruction, no passing
        # moment or to-do, within its limit.
        human = s.manager.get_core_context()["human"]
        about = {d for d, theme in filed.items() if theme in ("identity", "places & paths")}
        assert 0 < len(human) <= 600 and set(human.split("; ")) <= about

        chat = ScriptedModel(messages=iter(["- Lovely film.", "- Noted.", "- Sure.", "- Ok."]))
        monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: chat)
        reply = await s.say("t2", MOVIE)  # another thread, nothing about replies or names
        prompt = chat.seen[-1]
        system = _system_text(prompt)
        assert "short bullet points and never use emoji" in system
        assert "小梅" in system
        assert "<standing_instructions>" in system
        # Given once, as instructions, not again among the memories retrieval found.
        assert not any("instruction" in m["theme"] for m in reply.related_memories)
        assert count_tokens_approximately(prompt) <= BUDGET
        # The reply keeps what it drew on: the instructions first, then what retrieval found.
        instruction_ids = {i for i, m in s.manager.list_items().items() if "instruction" in m.theme
                           or "要求" in m.theme}  # fmt: skip
        kept = await s._graph.aget_state({"configurable": {"thread_id": "t2"}})
        ids = kept.values["messages"][-1].response_metadata["memory_ids"]
        assert ids == reply.memory_ids
        assert set(ids[:2]) == instruction_ids
        assert ids[2:] == [m["id"] for m in reply.related_memories]

        # A newer name replaces the older one in the prompt; the older memory is still kept.
        monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: OfflineChatModel())
        await s.say("t1", "Please call me Meimei from now on.")
        await s.wait_for_writes()
        monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: chat)
        await s.say("t3", MOVIE)
        system = _system_text(chat.seen[-1])
        assert "Meimei" in system and "小梅" not in system
        assert "short bullet points" in system

        # Forgotten when the user asks: gone from the very next reply's prompt.
        monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: OfflineChatModel())
        await s.say("t1", "Please forget the bullet points instruction.")
        await s.wait_for_writes()
        assert not [m for m in s.manager.list_items().values() if "bullet" in m.description]
        monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: chat)
        await s.say("t4", MOVIE)
        system = _system_text(chat.seen[-1])
        assert "bullet points" not in system and "Meimei" in system
