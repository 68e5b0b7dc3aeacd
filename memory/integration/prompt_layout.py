"""The chat's system prompt in two parts and how it is sent: one system message, or the part that
changes every turn as a second one just before the user's latest message (a cached prefix)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from memory.integration.models.loading import split_model_name

# Providers whose API takes a second system message later in the conversation (OpenAI and any
# OpenAI-compatible server: llama-server, vLLM, Ollama).
SPLIT_PROVIDERS = frozenset({"openai"})


@dataclass(frozen=True)
class ChatPrompt:
    """The chat's system prompt in two parts: `instructions`, the same from turn to turn (the
    persona, the rules, the tool sentences, the running summary), and `context`, this turn's
    (the time, the core context, the memories, what was said lately); "" when a prompt of the
    run's own (`Context.system_prompt`) holds everything in `instructions`."""

    instructions: str
    context: str = ""

    @property
    def whole(self) -> str:
        """Both parts as one system message."""
        return f"{self.instructions}\n\n{self.context}" if self.context else self.instructions


def splits_prompt(model: str, layout: str) -> bool:
    """Whether the chat model `model` ("provider/model") gets this turn's context as a second
    system message (GULFSTREAM_PROMPT_LAYOUT `split`), else one system message (`single`).
    `auto` splits for OpenAI and OpenAI-compatible servers, which take a system message anywhere
    and reuse a cached prefix; Anthropic's API and some others refuse a system message after the
    first user message."""
    if layout == "auto":
        return split_model_name(model)[0] in SPLIT_PROVIDERS
    return layout == "split"


def request_messages(
    prompt: ChatPrompt, messages: Sequence[BaseMessage], split: bool, note: str = ""
) -> list[BaseMessage]:
    """The system prompt and the conversation as sent, `note` (this turn's tool results, a
    nudge) ending the prompt. Split, the instructions come first and this turn's context just
    before the user's latest message: from one turn to the next only the latest exchange and
    the context are new to the model's cache, not the whole conversation."""
    if not split or not prompt.context:
        return [SystemMessage(content=prompt.whole + note), *messages]
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    at = starts[-1] if starts else 0
    return [
        SystemMessage(content=prompt.instructions),
        *messages[:at],
        SystemMessage(content=prompt.context + note),
        *messages[at:],
    ]
