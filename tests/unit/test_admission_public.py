"""The admission scorer on turns other people wrote (DailyDialog with its Chinese translation,
Persona-Chat facts; tests/data/README.md): the held-out split keeps what matters and skips small
talk, and an answer to the assistant's question is kept unless it is plain small talk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.admission import score_turn

PUBLIC = Path(__file__).resolve().parents[1] / "data" / "public_admission_set.json"
RECALL_TARGET = 0.98  # of memorable turns, admitted (write or batch)
SKIP_TARGET = 0.6  # of plain small talk, skipped


def public_turns(split: str, lang: str) -> list[dict]:
    turns = json.loads(PUBLIC.read_text(encoding="utf-8"))["turns"]
    return [t for t in turns if t["split"] == split and lang in ("both", t["lang"])]


def admitted(turn: dict) -> bool:
    return score_turn(turn["text"], after=turn.get("after", "")).admitted


def test_the_public_set_has_both_labels_languages_and_a_held_out_split() -> None:
    held_out = public_turns("held-out", "both")
    tuning = public_turns("tuning", "both")
    assert len(held_out) >= 500 and len(tuning) > len(held_out)
    assert {t["label"] for t in held_out} == {"keep", "drop"}
    assert {t["lang"] for t in held_out} == {"en", "zh"}
    ids = [t["id"] for t in held_out + tuning]
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("lang", ["en", "zh", "both"])
def test_held_out_memorable_turns_are_kept_and_small_talk_skipped(lang: str) -> None:
    turns = public_turns("held-out", lang)
    keep = [t for t in turns if t["label"] == "keep"]
    drop = [t for t in turns if t["label"] == "drop"]
    missed = [t["text"] for t in keep if not admitted(t)]
    kept = [t["text"] for t in drop if admitted(t)]
    assert 1 - len(missed) / len(keep) >= RECALL_TARGET, missed
    assert 1 - len(kept) / len(drop) >= SKIP_TARGET, kept


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        ("Which floor is the gym on?", "On the first floor."),
        ("洗手间在哪里？", "在一楼。"),
        ("What year did you buy it?", "2002."),
        ("你们什么时候搬的家？", "去年秋天。"),
    ],
)
def test_an_answer_to_the_assistants_question_is_kept(asked: str, answer: str) -> None:
    assert "answer" not in score_turn(answer).reasons  # nothing was asked
    admission = score_turn(answer, after=asked)
    assert admission.decision == "batch", admission.describe()
    assert "answer" in admission.reasons


@pytest.mark.parametrize(
    ("asked", "reply"),
    [
        ("Would you like some more tea?", "No, thank you."),
        ("Anything else I can help with?", "Not really."),
        ("要不要再来一杯？", "不，谢谢。"),
        ("你还记得吗？", "我不知道。"),
    ],
)
def test_small_talk_after_a_question_is_still_skipped(asked: str, reply: str) -> None:
    admission = score_turn(reply, after=asked)
    assert admission.decision == "skip", admission.describe()


def test_question_words_in_a_statement_do_not_make_it_a_question() -> None:
    statement = score_turn("就堵几分钟而已，红绿灯处左转就能看见了。")
    assert "question" not in statement.reasons and statement.admitted
    assert "question" in score_turn("红绿灯处左转吗？").reasons
    with pytest.raises(ValueError, match="after"):
        score_turn("ok", after=None)  # type: ignore[arg-type]


RECALL_SETS = PUBLIC.parent / "recall_sets"
# The sets whose text is committed: the turns their questions were later answered from.
SETS_WITH_TEXT = ("statements_spc_en", "statements_xpersona_zh", "assistant_prefeval_en",
                  "assistant_updates_spc_en", "assistant_updates_xpersona_zh")  # fmt: skip


def needed_turns(name: str, split: str) -> list[str]:
    data = json.loads((RECALL_SETS / f"{name}.json").read_text(encoding="utf-8"))
    text = {m["id"]: m["text"] for m in data["memories"]}
    gold = {g for q in data["queries"] if q["split"] == split for g in q["relevant"]}
    return [text[g] for g in sorted(gold)]


def test_the_turns_later_questions_needed_are_kept() -> None:
    # Other people's turns that a later question was answered from (tests/data/README.md, the
    # recall sets): what admission skips there is lost to recall for good.
    turns = [t for name in SETS_WITH_TEXT for t in needed_turns(name, "held-out")]
    missed = [t for t in turns if not score_turn(t).admitted]
    assert len(turns) > 400
    assert 1 - len(missed) / len(turns) >= RECALL_TARGET, missed


@pytest.mark.parametrize(
    "text",
    [
        "I can imagine! I live in a big city and I'm always looking for some peace and quiet.",
        "Turks and Caicos is great for water sports. I'm going snorkeling and kayaking! Have you "
        "been?",
        "爸爸给我一个德国牧羊犬来帮助农场。你住在哪里？",
        "Im at the movies",
    ],
)
def test_a_fact_before_a_question_back_or_a_reaction_is_kept(text: str) -> None:
    assert score_turn(text).admitted, score_turn(text).describe()


@pytest.mark.parametrize("text", ["What about you?", "Have you been to Italy?", "im fine"])
def test_a_bare_question_or_a_pleasantry_is_still_skipped(text: str) -> None:
    assert not score_turn(text).admitted


@pytest.mark.parametrize(
    "text",
    [
        "喉咙干痒难受，时不时咳嗽几声，没有发烧",
        "最近几天咳嗽加重，无发热，全身无力酸软",
        "Been coughing all week, no fever though.",
    ],
)
def test_a_symptom_told_without_i_is_kept(text: str) -> None:
    # Chinese leaves the subject out: the body the user describes is their own.
    assert score_turn(text).admitted, score_turn(text).describe()


def test_a_short_question_about_health_in_general_is_not() -> None:
    assert not score_turn("Does coffee cause headaches?").admitted
    assert not score_turn("感冒了吗？").admitted


@pytest.mark.parametrize(
    "text",
    [
        "喉咙发痒，时不时咳嗽，体温一直正常，请问可以排除新冠肺炎吗？",
        "I was wondering, since my knee has been swollen for three weeks after the marathon, "
        "should I see a doctor?",
    ],
)
def test_an_account_that_starts_or_ends_by_asking_is_kept(text: str) -> None:
    # "请问" / "I was wondering" frame the message; what it tells is the user's own knee.
    assert score_turn(text).admitted, score_turn(text).describe()


@pytest.mark.parametrize(
    "text", ["请问一下", "我想问一下明天天气怎么样？", "Quick question: what's 2+2?"]
)
def test_asking_about_asking_is_still_skipped(text: str) -> None:
    assert not score_turn(text).admitted, score_turn(text).describe()
