"""Tolerant reading of the LLM retriever's answer: a JSON array of indices, wherever it is."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCED = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_ARRAY = re.compile(r"\[[^\[\]]*\]")


def _find_array(text: str) -> list[Any] | None:
    """The answer's JSON array: the whole text, else a fenced block, else the last array found."""
    stripped = text.strip()
    attempts = [stripped]
    attempts += [block.strip() for block in _FENCED.findall(stripped)]
    # Models that reason before answering put the answer last, so try the arrays from the end.
    attempts += list(reversed(_ARRAY.findall(stripped)))
    for attempt in attempts:
        try:
            value = json.loads(attempt)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, list):
            return value
        if attempt is stripped:  # a whole answer of null, an object or a number: unusable
            return None
    return None


def parse_indices(text: str, count: int) -> list[int] | None:
    """Valid indices in answer order, or None when the answer is unusable.

    Dropped: indices out of range or negative, repeats, bools, floats, strings and anything else
    that is not an int. `[]` is a valid answer ("nothing related"); a non-empty array in which
    nothing survives is unusable, as is null, an object or text without an array.
    """
    values = _find_array(text)
    if values is None:
        return None
    indices: list[int] = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        if 0 <= value < count and value not in indices:
            indices.append(value)
    if values and not indices:
        return None
    return indices
