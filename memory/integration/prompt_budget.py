"""The prompt a turn sends and its budget: counted without a tokenizer, trimmed to fit."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages

from memory.integration.settings import Settings
from memory.text.messages import text_of

SUMMARY_SHARE = 0.25  # of the budget: the most the running summary may take
CHARS_PER_TOKEN = 4  # as count_tokens_approximately counts
MIN_SUMMARY_CHARS = 200
_SENTENCE_END = re.compile(r"[.!?。！？；;](?=\s|$)|[。！？]|\n")


def latest_user_text(messages: Sequence[AnyMessage]) -> str:
    """The text of the latest user message ("" when there is none)."""
    return next((text_of(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), "")


def budget_for(settings: Settings, model: Any) -> int | None:
    """The prompt budget for this chat model (None: compaction off). The window comes from
    the model's profile (`max_input_tokens`) when LangChain knows it."""
    profile = getattr(model, "profile", None)
    window = profile.get("max_input_tokens") if isinstance(profile, dict) else None
    return settings.context_budget(window if isinstance(window, int) else None)


def prompt_tokens(system: str, messages: Sequence[AnyMessage]) -> int:
    """What a prompt costs, counted without a tokenizer download (about 4 characters a token)."""
    return count_tokens_approximately([SystemMessage(system), *messages])


def summary_limit(budget: int) -> int:
    """The running summary's size limit in characters under a prompt budget of `budget` tokens."""
    return max(MIN_SUMMARY_CHARS, int(budget * SUMMARY_SHARE) * CHARS_PER_TOKEN)


def cut_on_sentence(text: str, max_chars: int) -> str:
    """`text` when it is at most `max_chars` long, else its start up to the last sentence end
    that fits (a space, then an ellipsis, when no sentence ends in the first third)."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    head = text[: max(0, max_chars - 1)]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= max_chars // 3:
        return head[: ends[-1]].strip()
    space = head.rfind(" ")
    return (head[:space] if space >= max_chars // 3 else head).rstrip() + "…"


def fit_to_budget(system: str, messages: Sequence[AnyMessage], budget: int | None) -> list[Any]:
    """The messages to send within the budget: all of them when they fit, else the most recent
    whole turns that do (the state keeps them all; a summary that could not be made, or a
    cooldown, ends here). The latest user message and what follows it are always sent."""
    if budget is None or prompt_tokens(system, messages) <= budget:
        return list(messages)
    room = max(0, budget - prompt_tokens(system, []))
    kept = trim_messages(
        list(messages), max_tokens=room, token_counter=count_tokens_approximately,
        strategy="last", start_on="human", allow_partial=False,
    )  # fmt: skip
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    if not starts:
        return list(kept) or list(messages)
    latest = messages[starts[-1]]
    if not any(m.id == latest.id for m in kept):
        return list(messages[starts[-1] :])
    return list(kept)
