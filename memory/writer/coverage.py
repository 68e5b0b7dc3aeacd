"""What the user said about themselves that no memory holds after the writer's answer."""

from __future__ import annotations

from memory.admission import score_turn
from memory.writer.faithful import evidence_words, main_language
from memory.writer.guards import detect_forget_request
from memory.writer.tools import MemoryToolkit

# Admission's signs that a message tells something lasting about the user. A batch's one
# Chinese message among English ones ("我最喜欢的水果是芒果。") is what the 1.5B model left out.
FACT_SIGNS = frozenset(
    ["first_person_fact", "possession_or_relation", "preference", "life_event",
     "standing_instruction"]
)  # fmt: skip
NOT_A_FACT = frozenset(["question", "hypothetical", "small_talk", "repeats_memory"])


def unfiled_facts(kit: MemoryToolkit) -> list[str]:
    """The user's messages of the turn that state a fact about them (admission's signs, no
    question, no forget request) and share no word with any memory the store would hold once
    the staged changes are applied."""
    held = set().union(*(evidence_words(m.description) for m in kit.view.live.values()))
    missed = []
    for message in kit.user_messages:
        reasons = set(score_turn(message).reasons)
        if not reasons & FACT_SIGNS or reasons & NOT_A_FACT or detect_forget_request(message):
            continue
        if not evidence_words(message) & held:
            missed.append(message)
    return missed


# A fact kept in the user's own words, when the model wrote it only in another language.
IN_THEIR_WORDS = {"en": 'The user said: "{message}"', "zh": "用户说：“{message}”"}


def in_their_words(kit: MemoryToolkit, languages: set[str]) -> list[dict[str, str]]:
    """Create operations for the facts of the turn no memory holds, said in one of
    `languages`: the ones the model kept writing in another language (refused twice), stored as
    the user said them rather than lost."""
    return [
        {"op": "create", "content": IN_THEIR_WORDS[main_language(message)].format(
            message=message.strip())}
        for message in unfiled_facts(kit)
        if main_language(message) in languages
    ]  # fmt: skip
