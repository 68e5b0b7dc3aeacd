"""One text for a merged group: the most complete member offline, or one model call that
rewrites the group, checked against the group's numbers, dates and names."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from memory.prompts.consolidation import MERGE_PROMPTS
from memory.store.item import check_description
from memory.text.fencing import escape_data
from memory.text.language import language_of
from memory.upkeep.consolidation.similarity import fingerprint, markers

logger = logging.getLogger(__name__)

# A rewrite longer than this many times the longest member is not a rewrite of the group.
MAX_GROWTH = 2.0


def most_complete(texts: Sequence[str]) -> int:
    """The index of the member covering most of the group's words, then the longest, then the
    first: nothing another member says is lost when the group is near-identical."""
    prints = [fingerprint(text) for text in texts]
    union = frozenset().union(*(fp.tokens for fp in prints))
    return max(
        range(len(texts)),
        key=lambda i: (len(prints[i].tokens & union), len(texts[i]), -i),
    )


def rewrite(llm: Any, texts: Sequence[str]) -> str | None:
    """The model's one-fact version of the group, or None (logged) when it failed, was not one
    valid description, or lost or invented a number, date, name or negation."""
    language = language_of(" ".join(texts))
    listing = "\n".join(f"- {escape_data(text)}" for text in texts)
    prompt = MERGE_PROMPTS[language].format(memories=listing)
    try:
        answer = llm.invoke([("human", prompt)])
    except Exception:
        logger.exception("consolidation rewrite failed; keeping the most complete text")
        return None
    text = getattr(answer, "text", answer)
    text = (text() if callable(text) else text) if not isinstance(text, str) else text
    candidate = str(text).strip().strip('"“”').strip()
    try:
        candidate = check_description(candidate)
    except ValueError as exc:
        logger.warning("consolidation rewrite unusable (%s); keeping the most complete text", exc)
        return None
    if "\n" in candidate or len(candidate) > MAX_GROWTH * max(len(t) for t in texts):
        logger.warning("consolidation rewrite is not one short fact; keeping the most complete")
        return None
    if markers(candidate) != markers(texts[0]):
        logger.warning(
            "consolidation rewrite %r changed the group's numbers, dates or names; keeping the "
            "most complete text",
            candidate,
        )
        return None
    return candidate
