"""The chat agent's system prompt: the prompt's language, the fenced memories and core context."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from graph.context import Context
from graph.state import State
from memory import MemoryItem
from memory.integration import ChatPrompt, escape_data
from prompts import persona
from prompts.agent import (
    COMING_UP_BLOCKS,
    COMING_UP_DAY_WORDS,
    CORE_CONTEXT_BLOCKS,
    CORE_CONTEXT_LABELS,
    MEMORIES_BLOCKS,
    MEMORY_DATES,
    MEMORY_SAID,
    NO_MEMORIES,
    OFF_THE_RECORD,
    SAID_RECENTLY_BLOCKS,
    STANDING_INSTRUCTIONS_BLOCKS,
    WEEKDAYS_ZH,
)
from prompts.compaction import SUMMARY_BLOCKS, SUMMARY_FIND_WORDS


def memory_lines(memories: Sequence[dict[str, Any]], language: str = "en") -> str:
    """One line per memory, escaped so that memory text cannot close the fence around it, with
    the local day it was first said and the day it last changed when that differs ("when did I
    tell you…?" and which of two memories is newer are answered from these)."""
    lines = []
    for memory in memories:
        text = escape_data(memory.get("description", ""))
        theme = escape_data(memory.get("theme", ""))
        line = f"- [{theme}] {text}" if theme else f"- {text}"
        said = MemoryItem.local_date(memory.get("created_time"))
        updated = MemoryItem.local_date(memory.get("latest_update_time"))
        if said:
            dates = MEMORY_DATES[language] if updated and updated != said else MEMORY_SAID[language]
            line += dates.format(said=said, updated=updated)
        lines.append(line)
    return "\n".join(lines)


def format_memories(memories: Sequence[dict[str, Any]], language: str) -> str:
    """The memories block: fenced in <memories>, one escaped line each, marked as data."""
    if not memories:
        return NO_MEMORIES[language]
    return MEMORIES_BLOCKS[language].format(items=memory_lines(memories, language))


def format_said_recently(said: Sequence[dict[str, Any]], language: str) -> str:
    """The block of what the user said lately and the writer has not filed ("" when nothing):
    fenced in <said_recently>, one escaped line each with when it was said (local time)."""
    lines = []
    for line in said:
        text = " / ".join(part.strip() for part in str(line.get("text", "")).splitlines())
        when = _local_minute(str(line.get("said_at", "")))
        lines.append(f"- ({when}) {escape_data(text)}" if when else f"- {escape_data(text)}")
    return SAID_RECENTLY_BLOCKS[language].format(items="\n".join(lines)) if lines else ""


def format_standing_instructions(instructions: Sequence[dict[str, Any]], language: str) -> str:
    """The block of the user's standing instructions ("" when none): fenced in
    <standing_instructions>, one escaped line each, newest first, as the library chose and
    bounded them (`MemoryState.standing_instructions`)."""
    lines = [f"- {escape_data(str(i.get('description', '')))}" for i in instructions]
    return STANDING_INSTRUCTIONS_BLOCKS[language].format(items="\n".join(lines)) if lines else ""


def format_coming_up(plans: Sequence[dict[str, Any]], language: str, today: date) -> str:
    """The block of what is planned soon ("" when nothing): fenced in <coming_up>, one escaped
    line each, led by its day and how far it is from `today` (the run's, in the user's zone)."""
    lines = []
    for plan in plans:
        try:
            day = date.fromisoformat(str(plan.get("day", "")))
        except ValueError:
            continue
        ahead = (day - today).days
        if ahead < 0:
            continue  # passed: a memory of the past now, not a plan
        words = COMING_UP_DAY_WORDS[language]
        when = f"{day.isoformat()}, {words[ahead]}" if ahead < len(words) else day.isoformat()
        lines.append(f"- ({when}) {escape_data(str(plan.get('description', '')))}")
    return COMING_UP_BLOCKS[language].format(items="\n".join(lines)) if lines else ""


def _local_minute(stamp: str) -> str:
    try:
        return f"{datetime.fromisoformat(stamp).astimezone():%Y-%m-%d %H:%M}"
    except ValueError:
        return ""


def current_time_text(language: str, now: datetime | None = None) -> str:
    """The local time with the weekday, in the prompt's language."""
    now = now or datetime.now().astimezone()
    if language == "zh":
        return f"{now:%Y-%m-%d %H:%M} {WEEKDAYS_ZH[now.weekday()]} (UTC{now:%z})"
    return f"{now:%A %Y-%m-%d %H:%M} (UTC{now:%z})"


def format_core_context(core_context: dict[str, str], language: str) -> str:
    """The core context block ("" before it is seeded), escaped like the memories."""
    labels = CORE_CONTEXT_LABELS[language]
    lines = []
    for key, label in labels.items():
        text = escape_data(core_context.get(key, ""))
        if text:
            lines.append(f"{label}: {text}")
    return CORE_CONTEXT_BLOCKS[language].format(lines="\n".join(lines)) if lines else ""


def format_summary(summary: str, language: str, tools: Sequence[str] = ()) -> str:
    """The running summary of the compacted conversation, fenced as reference ("" when none),
    each line escaped like the memories; it points at `search_conversations` only when that
    is one of the bound `tools`."""
    lines = [escape_data(line) for line in summary.splitlines() if line.strip()]
    if not lines:
        return ""
    find_words = SUMMARY_FIND_WORDS[language] if "search_conversations" in tools else ""
    return SUMMARY_BLOCKS[language].format(summary="\n".join(lines), find_words=find_words)


def tool_guidance(tools: Sequence[str], language: str) -> str:
    """The prompt's sentences about the bound tools (prompts/persona.py), one line each."""
    sentences = [
        persona.TOOL_GUIDANCE[language][name]
        for name in tools
        if name in persona.TOOL_GUIDANCE[language]
    ]
    return "".join("\n" + sentence for sentence in sentences)


def human_without(human: str, memories: Sequence[dict[str, Any]]) -> str:
    """The core context's "About the user" without the facts the memories block shows, so
    that a fact enters the prompt once (the writer joins the user's facts with "; ")."""
    shown = {str(memory.get("description", "")).strip() for memory in memories}
    return "; ".join(part for part in human.split("; ") if part.strip() not in shown)


def build_chat_prompt(
    context: Context,
    memories: list[dict[str, Any]],
    core_context: dict[str, str] | None = None,
    language: str | None = None,
    summary: str = "",
    tools: Sequence[str] = (),
    said_recently: Sequence[dict[str, Any]] = (),
    standing_instructions: Sequence[dict[str, Any]] = (),
    private: bool = False,
    coming_up: Sequence[dict[str, Any]] = (),
) -> ChatPrompt:
    """The system prompt: the built-in one (prompts/persona.py, in two parts), or
    `context.system_prompt` (one part), placeholders filled.

    The core context and memories blocks go where `{core_context}` and `{memories}` are; a
    prompt of the run's own without a placeholder gets that block appended, so that neither is
    silently lost. `{persona}` is the user's own persona when they set one, else the built-in
    one; `{tools}` the sentences about `tools`, the names of the bound chat tools. What the user
    said lately and the writer has not filed yet (`said_recently`) follows the memories block;
    what is planned soon (`coming_up`) precedes it.
    The user's standing instructions (`standing_instructions`) follow the prompt's own rules,
    and the running summary of a compacted conversation ends the instructions. A `private`
    conversation (off the record) gets a note saying so after the memories block.
    """
    language = language or context.language_for()
    core = dict(core_context or {})
    own_persona = core.pop("persona", "").strip() or persona.PERSONA[language]
    core["human"] = human_without(core.get("human", ""), memories)
    block = format_core_context(core, language)
    # A plan coming up is shown once, in its own block, with its day.
    upcoming = format_coming_up(coming_up, language, context.moment().date())
    shown = {plan.get("id") for plan in coming_up} if upcoming else set()
    memories = [memory for memory in memories if memory.get("id") not in shown]
    listed = format_memories(memories, language)
    memories_block = _with_block(
        _with_block(upcoming, listed) if upcoming else listed,
        format_said_recently(said_recently, language),
    )
    if private:
        memories_block = _with_block(memories_block, OFF_THE_RECORD[language])

    def filled(template: str) -> str:
        if not block:
            template = template.replace("{core_context}\n\n", "")
        # str.replace, not str.format: a user's own prompt may contain other braces.
        return (
            template.replace("{current_time}", current_time_text(language, context.moment()))
            .replace("{tools}", tool_guidance(tools, language))
            .replace("{memories}", memories_block)
            .replace("{core_context}", block)
            .replace("{persona}", own_persona)
        )

    summary_block = _with_block(
        format_standing_instructions(standing_instructions, language),
        format_summary(summary, language, tools),
    )
    if context.system_prompt:
        template = context.system_prompt
        if "{core_context}" not in template and block:
            template = f"{template}\n\n{{core_context}}"
        if "{memories}" not in template:
            template = f"{template}\n\n{{memories}}"
        return ChatPrompt(_with_block(filled(template), summary_block))
    instructions = filled(persona.SYSTEM_PROMPTS[language])
    return ChatPrompt(
        _with_block(instructions, summary_block), filled(persona.CONTEXT_PROMPTS[language])
    )


def build_system_prompt(
    context: Context,
    memories: list[dict[str, Any]],
    core_context: dict[str, str] | None = None,
    language: str | None = None,
    summary: str = "",
    tools: Sequence[str] = (),
    said_recently: Sequence[dict[str, Any]] = (),
    standing_instructions: Sequence[dict[str, Any]] = (),
    coming_up: Sequence[dict[str, Any]] = (),
) -> str:
    """The system prompt as one message (build_chat_prompt's parts joined)."""
    return build_chat_prompt(
        context,
        memories,
        core_context,
        language,
        summary,
        tools,
        said_recently,
        standing_instructions=standing_instructions,
        coming_up=coming_up,
    ).whole


def _with_block(text: str, block: str) -> str:
    return f"{text}\n\n{block}" if block and text else text or block


def chat_prompt(
    state: State, context: Context, language: str, tools: Sequence[str], summary: str
) -> ChatPrompt:
    """The system prompt the agent sends this turn in `language`, with `tools` (names) bound and
    the running summary as the library shows it (`memory.integration.answer` calls this)."""
    return build_chat_prompt(
        context, state.related_memories, state.core_context, language, summary, tools,
        said_recently=state.said_recently, standing_instructions=state.standing_instructions,
        private=state.private, coming_up=state.coming_up,
    )  # fmt: skip
