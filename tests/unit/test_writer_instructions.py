"""Both writer protocols send one rules text per language, the app's if it hands one in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, SystemMessage

import graph  # noqa: F401  (importing the app hands the library its text)
from memory.integration import AppText, run_memory
from memory.integration.app_text import current_app_text
from memory.integration.settings import use_settings
from memory.long_term import LongTermMemory
from memory.prompts.writer import MemorySection, profile_section
from memory.prompts.writer_instructions import DEFAULT_WRITER_INSTRUCTIONS
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.writer.consumer import MemoryConsumer
from prompts import persona
from tests.fakes import ScriptedModel
from tests.unit.test_writer_tools import MONDAY_MORNING, a_turn

PROTOCOLS = ("tools", "json")
# Small talk: one answer that changes nothing ends the turn on either protocol (the json one asks
# again when a stated fact was left out).
SAID = {"en": "Hello there, how are you?", "zh": "你好，最近怎么样？"}
# Braces on purpose: the prompts are str.format templates, and a fork's text is sent verbatim.
CUSTOM = {
    "en": '1. Keep only the user\'s favourite {colours}; write each as {"colour": name}.',
    "zh": "1. 只记用户最喜欢的{颜色}。",
}
# "about me" is the first profile section but not the first section: the example must look for it.
MINE = {
    "en": (
        MemorySection("likes", "what I like", "preference"),
        MemorySection("about me", "who I am", "profile"),
        MemorySection("where", "places", "profile"),
    ),
    "zh": (MemorySection("爱好", "", "preference"), MemorySection("关于我", "我是谁", "profile")),
}


def no_changes(protocol: str) -> AIMessage:
    """The answer that changes nothing, as each protocol says it."""
    return AIMessage(json.dumps({"operations": []}) if protocol == "json" else "no changes")


def system_prompt(model: ScriptedModel) -> str:
    [system] = [m for m in model.seen[0] if isinstance(m, SystemMessage)]
    return str(system.content)


async def written(tmp_path: Path, protocol: str, language: str, **options: Any) -> str:
    """The system prompt the writer sent for one turn in `language` on `protocol`."""
    model = ScriptedModel(messages=iter([no_changes(protocol)]))
    consumer = MemoryConsumer(model, protocol=protocol, clock=lambda: MONDAY_MORNING, **options)
    manager = YamlMemoryManager(tmp_path / f"{protocol}-{language}", "ada")
    await consumer.consume(a_turn("ada", "turn-1", SAID[language]), LongTermMemory(manager))
    return system_prompt(model)


def default_lines(language: str) -> list[str]:
    """The default rules' lines, each long enough to say something only they say."""
    lines = (line.strip() for line in DEFAULT_WRITER_INSTRUCTIONS[language].splitlines())
    return [line for line in lines if len(line) > 20]


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_both_protocols_send_the_same_default_rules_once(tmp_path, language) -> None:
    rules = DEFAULT_WRITER_INSTRUCTIONS[language]
    for protocol in PROTOCOLS:
        prompt = await written(tmp_path, protocol, language)
        assert prompt.count(rules) == 1, protocol
        for line in default_lines(language):  # no second, diverging copy beside it
            assert prompt.count(line) == 1, (protocol, line)


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_custom_instructions_replace_the_default_in_both_protocols(
    tmp_path, language
) -> None:
    for protocol in PROTOCOLS:
        prompt = await written(tmp_path, protocol, language, instructions=CUSTOM)
        assert CUSTOM[language] in prompt, protocol
        assert not [line for line in default_lines(language) if line in prompt], protocol
        # The protocol's own part stays: the tools or the JSON answer, and the sections.
        assert ("read_memories" in prompt) == (protocol == "tools")
        assert ('"operations"' in prompt) == (protocol == "json")


async def test_a_language_left_out_gets_the_en_text(tmp_path) -> None:
    for protocol in PROTOCOLS:
        prompt = await written(tmp_path, protocol, "zh", instructions={"en": CUSTOM["en"]})
        assert CUSTOM["en"] in prompt and DEFAULT_WRITER_INSTRUCTIONS["zh"] not in prompt


def test_instructions_that_are_not_a_mapping_of_texts_are_refused() -> None:
    model = ScriptedModel(messages=iter([]))
    with pytest.raises(TypeError, match="mapping of language to text"):
        MemoryConsumer(model, instructions="Keep everything.")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'zh'"):
        MemoryConsumer(model, instructions={"en": "Keep everything.", "zh": " "})
    with pytest.raises(ValueError, match="'zh-CN'"):
        MemoryConsumer(model, instructions={"zh-CN": "全部记住。"})


@pytest.mark.parametrize(("language", "profile"), [("en", "about me"), ("zh", "关于我")])
async def test_the_json_example_files_a_name_under_the_first_profile_section(
    tmp_path, language, profile
) -> None:
    prompt = await written(tmp_path, "json", language, sections=MINE)
    assert f'"section": "{profile}"' in prompt
    assert "identity" not in prompt and "身份" not in prompt
    default = await written(tmp_path / "default", "json", language)
    assert f'"section": "{"身份" if language == "zh" else "identity"}"' in default  # as before


def test_without_a_profile_section_the_example_uses_the_first_section() -> None:
    assert profile_section([MemorySection("work"), MemorySection("home")], "en") == "work"
    assert profile_section(["notes"], "en") == "notes"
    assert profile_section([], "zh") == "身份"  # the library's, as the example always said


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_apps_instructions_reach_the_deployments_writer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, protocol: str
) -> None:
    app_text = AppText(sections=MINE, writer_instructions=CUSTOM)
    monkeypatch.setattr("memory.integration.app_text._app_text", app_text)
    monkeypatch.setattr(run_memory, "_consumers", {})  # built again with this app's text
    model = ScriptedModel(messages=iter([no_changes(protocol), no_changes(protocol)]))
    monkeypatch.setattr(run_memory, "load_chat_model", lambda name, **options: model)
    with use_settings(writer_protocol=protocol):
        consumer = run_memory.writer_consumer()
    assert consumer.instructions is CUSTOM
    manager = YamlMemoryManager(tmp_path / "memory-dir", "ada")
    for number, language in enumerate(("en", "zh")):
        turn = a_turn("ada", f"turn-{language}", SAID[language])
        await consumer.consume(turn, LongTermMemory(manager))
        [system] = [m for m in model.seen[number] if isinstance(m, SystemMessage)]
        assert CUSTOM[language] in str(system.content)
        assert not [line for line in default_lines(language) if line in str(system.content)]


def test_the_app_hands_in_the_instructions_of_prompts_persona() -> None:
    # Imported above, graph/__init__.py registered prompts/persona.py's text.
    assert current_app_text().writer_instructions is persona.WRITER_INSTRUCTIONS
