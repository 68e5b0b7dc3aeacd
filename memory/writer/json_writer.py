"""One turn written with the json protocol: the request, one repair round, the operations applied
to the staged toolkit."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from memory.prompts import writer_json as text
from memory.prompts.writer import profile_section
from memory.writer.coverage import in_their_words, unfiled_facts
from memory.writer.faithful import INVENTED, WRONG_LANGUAGE
from memory.writer.json_protocol import (
    MAX_ANSWER_TOKENS,
    UnusableAnswer,
    apply_operations,
    operations_schema,
    parse_operations,
    response_format,
    section_names,
)
from memory.writer.tools import MemoryToolkit

logger = logging.getLogger(__name__)

ANSWER_ROUNDS = 2  # the answer, and one more after telling the model what was wrong


class JsonWriteFailed(Exception):
    """The model gave no usable answer twice; nothing of the turn was staged by it."""


def json_prompts(language: str, sections: Any, kit: MemoryToolkit, rules: str
                 ) -> tuple[str, str, str]:  # fmt: skip
    """(system, turn template, repair note) in `language` ("en" or "zh"), the system prompt built
    on `rules` (the writer's instructions in that language); the sections listed by name only:
    a small model reads a short prompt better."""
    names = ", ".join(section_names(sections, kit))
    profile = profile_section(
        list(sections.keys()) if isinstance(sections, Mapping) else list(sections), language
    )
    if language == "zh":
        system = text.JSON_SYSTEM_ZH.format(rules=rules, profile=profile, sections=names)
        return system, text.JSON_TURN_ZH, text.JSON_REPAIR_ZH
    system = text.JSON_SYSTEM.format(rules=rules, profile=profile, sections=names)
    return system, text.JSON_TURN, text.JSON_REPAIR


def bind_for_json(model: Any, kit: MemoryToolkit, sections: Any
                  ) -> Any:  # fmt: skip
    """`model` bound to answer with the operations' schema, deterministically and briefly."""
    schema = operations_schema(sorted(kit.view.live), section_names(sections, kit))
    return model.bind(
        response_format=response_format(schema), temperature=0, max_tokens=MAX_ANSWER_TOKENS
    )


async def write_with_json(
    invoke: Callable[[list[Any]], Awaitable[Any]],
    kit: MemoryToolkit,
    system: str,
    turn_prompt: str,
    repair_note: str,
) -> str:
    """Ask, apply, and ask once more when the answer was unusable, every operation in it was a
    mistake (an unknown id, a missing field), a fact was refused as unfaithful, or a fact the user
    stated was left out (memory/writer/coverage.py); returns a one-line summary. `invoke` sends the
    messages to the bound model (with the caller's timeout and breaker)."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    messages: list[Any] = [SystemMessage(system), HumanMessage(turn_prompt)]
    problem, done, applied = "", [], 0
    wrong_language: set[str] = set()

    def kept_in_their_words() -> int:
        # A fact the model wrote in another language than the user's, twice, is stored in the
        # user's own words: refusing the translation must not lose what they said.
        fallback = in_their_words(kit, wrong_language) if wrong_language else []
        if not fallback:
            return 0
        logger.info("%d fact(s) written in another language twice: kept in the user's words",
                    len(fallback))  # fmt: skip
        outcome = apply_operations(kit, fallback)
        done.extend(outcome.results)
        return outcome.applied

    chinese = repair_note == text.JSON_REPAIR_ZH
    resend = text.JSON_RESEND_ZH if chinese else text.JSON_RESEND
    missed_note = text.JSON_MISSED_ZH if chinese else text.JSON_MISSED
    for round_number in range(1, ANSWER_ROUNDS + 1):
        reply = await invoke(messages)
        answer = reply.text if isinstance(reply.text, str) else str(reply.content)
        note = repair_note
        try:
            operations = parse_operations(answer)
        except UnusableAnswer as exc:
            problem = str(exc)
            kit.record_refused_call("(json answer)", f"Error: {problem}")
        else:
            outcome = apply_operations(kit, operations)
            done += outcome.results + outcome.refused
            applied += outcome.applied
            wrong_language |= outcome.wrong_language
            # A fact refused for a detail nobody said or the wrong language is asked for again,
            # even when others went through: dropping it would lose what the user said.
            fixable = [m for m in outcome.mistakes if INVENTED in m or WRONG_LANGUAGE in m]
            # A message that tells something about the user and that no memory holds is asked
            # for once more: a small model leaves out the one fact said in another language.
            missed = unfiled_facts(kit) if round_number < ANSWER_ROUNDS else []
            if fixable and round_number < ANSWER_ROUNDS:
                problem, note = "; ".join(fixable), resend if applied else repair_note
            elif missed and (applied or not outcome.mistakes):
                logger.info("the json answer stored nothing for %d message(s): asked again",
                            len(missed))  # fmt: skip
                problem, note = "; ".join(f"«{message}»" for message in missed), missed_note
            elif applied or not outcome.mistakes:
                applied += kept_in_their_words()
                return "; ".join(done) if done else "no changes"
            else:
                problem = "; ".join(outcome.mistakes)
        messages += [AIMessage(answer), HumanMessage(note.format(problem=problem))]
    applied += kept_in_their_words()
    if applied:  # the first answer's operations stand; the resent ones were refused again
        return "; ".join(done)
    raise JsonWriteFailed(f"an unusable answer in each of {ANSWER_ROUNDS} tries: {problem}")
