"""The running summary of a compacted conversation: updated by the chat model, or extracted by
rule with the offline model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.constants import TAG_NOSTREAM

from memory.admission import score_turn
from memory.integration.models.loading import is_offline
from memory.integration.prompt_budget import CHARS_PER_TOKEN, cut_on_sentence
from memory.prompts.summary import SHORTEN_PROMPTS, SUMMARY_PROMPTS
from memory.store.item import now_iso
from memory.text.fingerprint import Fingerprint, redact
from memory.text.language import language_of
from memory.text.messages import text_of

SUMMARY_WORDS = 250  # at most; a small limit asks for fewer
CHARS_PER_WORD = 6  # an English word and its space, about
MAX_TOKENS_SLACK = 50  # what a reply may take beyond its limit before the client cuts it
LINE_CHARS = 200
SPAN_CHARS = 24_000  # what of a span the model is shown (the start and the end)
LINE_PREFIX = "- user: "
EXTRACT_MIN_SCORE = 0.0  # user messages the admission rules would not call small talk


@dataclass(frozen=True)
class RunningSummary:
    """The summary of every message compaction took out of the state: `text`, how many
    `messages` it covers, the id of the last one (`through`) and when it was updated."""

    text: str = ""
    messages: int = 0
    through: str = ""
    updated_at: str = ""
    # (memory id, line) taken out of `text` because they carried a forgotten memory: put back
    # when it is restored.
    withheld: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["withheld"] = [list(pair) for pair in self.withheld]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> RunningSummary:
        data = data or {}
        withheld = tuple((str(pair[0]), str(pair[1])) for pair in data.get("withheld") or ())
        return cls(
            str(data.get("text") or ""), int(data.get("messages") or 0),
            str(data.get("through") or ""), str(data.get("updated_at") or ""), withheld,
        )  # fmt: skip

    def extended(self, text: str, span: Sequence[BaseMessage]) -> RunningSummary:
        last = span[-1].id if span else self.through
        return RunningSummary(
            text.strip(), self.messages + len(span), last or "", now_iso(), self.withheld
        )


def without_forgotten(
    data: dict[str, Any] | None, prints: Mapping[str, Fingerprint]
) -> dict[str, Any] | None:
    """The running summary rewritten without what carries a forgotten memory (`prints`), and
    with what was withheld for a memory since restored put back; None when nothing changes.
    The graph does it before the summary enters any prompt (the agent's, the next summary's)."""
    summary = RunningSummary.from_dict(data)
    back = [line for memory_id, line in summary.withheld if memory_id not in prints]
    still = tuple(pair for pair in summary.withheld if pair[0] in prints)
    text = "\n".join([summary.text, *back]) if back else summary.text
    kept, withheld = redact(text, prints)
    if not back and not withheld:
        return None
    return replace(summary, text=kept.strip(), withheld=(*still, *withheld)).to_dict()


def transcript(span: Sequence[BaseMessage], limit: int = SPAN_CHARS) -> str:
    """The span as `role: text` lines (tool results and calls in short); a span longer than
    `limit` keeps its start and its end."""
    lines = []
    for message in span:
        text = " ".join(text_of(message.content).split())
        if isinstance(message, HumanMessage):
            lines.append(f"user: {text}")
        elif isinstance(message, ToolMessage):
            lines.append(f"tool result ({message.name}): {text[:300]}")
        elif isinstance(message, AIMessage):
            calls = ", ".join(call["name"] for call in message.tool_calls)
            lines.append(f"assistant: {text}" + (f" [called {calls}]" if calls else ""))
    joined = "\n".join(lines)
    if len(joined) <= limit:
        return joined
    return f"{joined[: limit // 4]}\n[…]\n{joined[-(limit - limit // 4) :]}"


def extractive_update(previous: str, span: Sequence[BaseMessage], max_chars: int) -> str:
    """The previous summary's lines, then one line for each user message of the span that
    says something (the admission rules' score); past the cap, the lines that say least leave
    first (the oldest of equals), and the rest keep their order."""
    lines = [line for line in previous.splitlines() if line.strip()]
    for message in span:
        if not isinstance(message, HumanMessage):
            continue
        text = " ".join(text_of(message.content).split())
        if text and score_turn(text).score > EXTRACT_MIN_SCORE:
            lines.append(f"{LINE_PREFIX}{text[:LINE_CHARS]}")
    scores = [score_turn(line.removeprefix(LINE_PREFIX)).score for line in lines]
    keep = set(range(len(lines)))
    for index in sorted(keep, key=lambda i: (scores[i], i)):
        if sum(len(lines[i]) + 1 for i in keep) <= max_chars:
            break
        keep.discard(index)
    return "\n".join(lines[i] for i in sorted(keep))


@dataclass(frozen=True)
class Summarized:
    """A summary the model made, within its limit, and how it got there: `shortened` (asked
    again because the first answer was too long) and `cut` (cut on a sentence boundary)."""

    text: str
    shortened: bool = False
    cut: bool = False

    @property
    def how(self) -> str:
        return " and ".join(
            step for step, done in (("shortened", self.shortened), ("cut", self.cut)) if done
        )


def _ask(model: Any, prompt: str, limit_chars: int) -> str:
    # Not streamed: a client following the run's messages must not see the summary as a reply.
    # `max_tokens` stops a model that would answer at the length of its input.
    bound = model.bind(max_tokens=limit_chars // CHARS_PER_TOKEN + MAX_TOKENS_SLACK)
    answer = bound.invoke([HumanMessage(prompt)], config={"tags": [TAG_NOSTREAM]})
    return text_of(answer.content).strip()


def summarize(
    model: Any, previous: RunningSummary, span: Sequence[BaseMessage], limit_chars: int
) -> Summarized:
    """The updated summary, at most `limit_chars` long whatever the model answers: the model is
    given the current summary and the span only (never asked to summarise its own summaries
    again), asked for that length and capped by `max_tokens`; an answer still too long is
    summarised again once, then cut on a sentence boundary. The offline model extracts.
    ValueError when the model answers nothing (the caller keeps the old summary)."""
    if is_offline(model):
        text = extractive_update(previous.text, span, limit_chars)
        return Summarized(cut_on_sentence(text, limit_chars))
    text = transcript(span)
    language = language_of(text)
    max_words = min(SUMMARY_WORDS, limit_chars // CHARS_PER_WORD)
    prompt = SUMMARY_PROMPTS[language].format(
        summary=cut_on_sentence(previous.text, limit_chars), messages=text, max_words=max_words
    )
    summary = _ask(model, prompt, limit_chars)
    if not summary:
        raise ValueError("the summary model answered nothing")
    shortened = False
    if len(summary) > limit_chars:
        again = SHORTEN_PROMPTS[language].format(
            chars=len(summary), max_words=max_words, summary=summary[:SPAN_CHARS]
        )
        try:
            shorter = _ask(model, again, limit_chars)
        except Exception:  # the first answer, cut below, is still a summary
            shorter = ""
        if shorter and len(shorter) < len(summary):
            summary, shortened = shorter, True
    bounded = cut_on_sentence(summary, limit_chars)
    return Summarized(bounded, shortened, bounded != summary)
