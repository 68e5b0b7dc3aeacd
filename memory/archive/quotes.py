"""What of an assistant reply quotes an archive search result: taken out before it is archived,
so that later searches find what people said, not copies of earlier search results."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory.archive.render import HEAD
from memory.text.tokenize import tokenize

QUOTE_MARK = "[quoted from the conversation archive]"
SHINGLE = 3  # a span quotes a result when most of its runs of three terms are in it
QUOTED_SHARE = 0.6
MIN_TERMS = 4  # shorter spans ("Yes.", "On May 2nd") are the reply's own words
_SPANS = re.compile(r"[^\n.!?。！？]*[.!?。！？]+[\"'”’」)]*|[^\n.!?。！？]+|\n")
_FENCE = HEAD.split("\n", 1)[1].split("{body}")[0].strip()  # "<conversation_archive>"


def is_archive_result(text: str) -> bool:
    """Whether a tool result is a conversation-archive search answer (render's own fence)."""
    return _FENCE in text


def _shingles(terms: Sequence[str]) -> set[tuple[str, ...]]:
    return {tuple(terms[i : i + SHINGLE]) for i in range(max(0, len(terms) - SHINGLE + 1))}


def strip_quotes(reply: str, results: Sequence[str]) -> str:
    """`reply` with each sentence or line that repeats one of the archive `results` (most of
    its three-term runs found there) replaced by QUOTE_MARK, runs of marks joined into one.
    Unchanged when no result is given or nothing is quoted."""
    if not results or not reply.strip():
        return reply
    quoted = set().union(*(_shingles(tokenize(result)) for result in results))
    pieces: list[str] = []
    for match in _SPANS.finditer(reply):
        span = match.group()
        grams = _shingles(tokenize(span))
        terms = len(tokenize(span))
        if terms >= MIN_TERMS and grams and len(grams & quoted) >= QUOTED_SHARE * len(grams):
            if not pieces or pieces[-1].strip() != QUOTE_MARK:
                lead = " " if pieces and not pieces[-1].endswith(("\n", " ")) else ""
                pieces.append(lead + QUOTE_MARK)
            continue
        pieces.append(span)
    return "".join(pieces).strip()
