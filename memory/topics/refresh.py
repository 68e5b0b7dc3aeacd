"""Topic summaries: made offline from the hottest facts, or by a model; read back per topic."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from memory.prompts.topics import TOPIC_SUMMARY_PROMPTS
from memory.store.item import MemoryItem
from memory.text.entities import DATE
from memory.text.fencing import escape_data
from memory.text.language import language_of
from memory.topics.summaries import StoredSummary
from memory.topics.table import Topic

if TYPE_CHECKING:
    from memory.store.manager import BaseMemoryManager
    from memory.topics.summaries import SummaryStore
    from memory.topics.table import TopicTable

logger = logging.getLogger(__name__)

SUMMARY_CHARS = 240  # an offline summary's length
SUMMARY_FACTS = 3  # the hottest facts an offline summary joins
MODEL_FACTS = 12  # the facts a model is shown (hottest first)
MODEL_SUMMARY_WORDS = 60
MODEL_SUMMARY_MAX_CHARS = 600  # a longer answer ignored the instructions: not used
MODEL_SUMMARIES_PER_PASS = 20  # model calls of one refresh at most (hottest changed topics)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_QUIET_RUN = {"tags": ["nostream", "memory_topics"], "run_name": "memory_topic_summary"}


class TopicMemory(Protocol):
    """A user's topics (`UserTopics` is one): the store, the topic table and the stored
    summaries."""

    manager: BaseMemoryManager

    @property
    def user_id(self) -> str: ...
    @property
    def table(self) -> TopicTable: ...
    @property
    def summaries(self) -> SummaryStore: ...


def fingerprint(topic: Topic, items: Mapping[str, MemoryItem]) -> str:
    """Changes when a member joins, leaves or is edited."""
    members = sorted((i, items[i].latest_update_time, items[i].description) for i in topic.members)
    return hashlib.sha256(json.dumps(members, ensure_ascii=False).encode()).hexdigest()[:32]


def offline_summary(topic: Topic, items: Mapping[str, MemoryItem]) -> str:
    """The SUMMARY_FACTS hottest (then most recent) members' texts joined, cut to SUMMARY_CHARS."""
    facts = [" ".join(items[i].description.split()) for i in topic.members[:SUMMARY_FACTS]]
    joiner = "；" if language_of(" ".join(facts)) == "zh" else "; "
    text = joiner.join(fact.rstrip("。.;；") for fact in facts)
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1].rstrip() + "…"


def model_summary(llm: Any, topic: Topic, items: Mapping[str, MemoryItem]) -> str | None:
    """A model's summary of `topic`, or None (logged) when the call fails or its answer is not a
    JSON object with a short, non-empty "summary" string."""
    facts = [items[i].description for i in topic.members[:MODEL_FACTS]]
    language = language_of(" ".join(facts))
    prompt = TOPIC_SUMMARY_PROMPTS[language].format(
        topic=escape_data(topic.display(language)),
        max_words=MODEL_SUMMARY_WORDS,
        facts="\n".join(f"- {escape_data(fact)}" for fact in facts),
    )
    try:
        from langchain_core.messages import HumanMessage
        from langchain_core.runnables import Runnable

        messages = [HumanMessage(content=prompt)]
        if isinstance(llm, Runnable):
            answer = llm.invoke(messages, config=_QUIET_RUN)  # type: ignore[arg-type]
        else:  # any object with invoke(messages) will do
            answer = llm.invoke(messages)
    except Exception as exc:
        logger.warning("the summary of topic %r failed: %s: %s", topic.key, type(exc).__name__, exc)
        return None
    from memory.text.messages import text_of

    text = text_of(getattr(answer, "content", answer))
    summary = _parse_summary(text)
    if summary is None:
        logger.warning("unusable summary of topic %r from the model: %r", topic.key, text[:200])
    return summary


def _parse_summary(text: str) -> str | None:
    match = _JSON_OBJECT.search(text or "")
    if match is None:
        return None
    try:
        value = json.loads(match.group())
    except (ValueError, RecursionError):
        return None
    summary = value.get("summary") if isinstance(value, dict) else None
    if not isinstance(summary, str):
        return None
    summary = " ".join(summary.split())
    return summary if 0 < len(summary) <= MODEL_SUMMARY_MAX_CHARS else None


def refresh_topic_summaries(memory: TopicMemory, llm: Any | None = None) -> int:
    """Make the summary of every topic whose members changed since its summary was made (and,
    with `llm`, of those only summarised offline so far), drop those of topics that are gone,
    and write them in one transaction. Returns how many summaries were written.

    Without `llm`, or when the model fails or answers badly (logged), a summary is the hottest
    facts joined. The model is asked for topics of two members or more, the hottest first, at
    most MODEL_SUMMARIES_PER_PASS per call; the rest wait for the next refresh.
    """
    table = memory.table
    items = memory.manager.list_items()
    stored = memory.summaries.read(memory.user_id)
    topics = [topic for topic in table.topics() if topic.kind != DATE]
    written: list[StoredSummary] = []
    model_calls = 0
    for topic in topics:
        if any(member not in items for member in topic.members):
            continue  # the store moved on while reading; the next refresh sees it whole
        current = fingerprint(topic, items)
        previous = stored.get(topic.key)
        wants_model = llm is not None and len(topic.members) > 1
        unchanged = previous is not None and previous.fingerprint == current
        if unchanged and previous is not None and (previous.source == "model" or not wants_model):
            continue
        text, source = None, "offline"
        if wants_model and model_calls < MODEL_SUMMARIES_PER_PASS:
            model_calls += 1
            text = model_summary(llm, topic, items)
            source = "model" if text is not None else "offline"
        elif wants_model and unchanged:
            continue  # already summarised offline; the model gets to it next time
        text = text or offline_summary(topic, items)
        made_from = tuple((i, items[i].latest_update_time) for i in topic.members)
        written.append(StoredSummary(topic.key, text, source, made_from, current))
    memory.summaries.replace(memory.user_id, written, {topic.key for topic in topics})
    return len(written)


def topic_summary(memory: TopicMemory, name: str) -> str | None:
    """The summary of the topic `name` resolves to; None when no topic does. The stored one
    while every fact it was made from is still live and unchanged (new members may have joined
    since), else one made now from the hottest facts: a deleted or corrected fact never lingers
    in a summary."""
    topic = memory.table.topic(name)
    if topic is None:
        return None
    stored = memory.summaries.read(memory.user_id).get(topic.key)
    items = memory.manager.list_items()
    members = set(topic.members)
    if stored is not None and all(
        memory_id in members and items[memory_id].latest_update_time == time
        for memory_id, time in stored.made_from
    ):
        return stored.summary
    return offline_summary(topic, items)
