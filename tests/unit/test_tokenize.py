"""The BM25 tokenizer: English words, Chinese bigrams and unigrams, and text mixing both."""

from __future__ import annotations

import pytest

from memory.text.language import has_cjk, language_of, resolve_language
from memory.text.tokenize import stem, tokenize


def test_english_is_lower_cased_without_stop_words() -> None:
    assert tokenize("The Tarot TOOL is in the project") == ["tarot", "tool", "project"]


def test_english_word_forms_meet_at_one_stem() -> None:
    forms = [
        ("refactoring", "refactored", "refactor"),
        ("cats", "cat"),
        ("movies", "movie"),
        ("stories", "story"),
        ("running", "runs", "run"),
        ("liked", "likes", "like"),
        ("shipped", "ship"),
    ]
    for group in forms:
        assert len({stem(word) for word in group}) == 1, group


def test_different_english_words_stay_apart() -> None:
    assert stem("cat") != stem("car")
    assert stem("tea") != stem("team")


def test_chinese_gives_unigrams_and_bigrams() -> None:
    tokens = tokenize("塔罗牌重构")
    assert {"塔", "罗", "牌", "重", "构"} <= set(tokens)
    assert {"塔罗", "罗牌", "牌重", "重构"} <= set(tokens)


def test_chinese_stop_characters_are_dropped() -> None:
    tokens = tokenize("我的猫")
    assert "我" not in tokens and "的" not in tokens
    assert "我的" not in tokens  # both characters are stop characters
    assert "猫" in tokens


def test_mixed_text_keeps_both_languages() -> None:
    tokens = tokenize("Miso喜欢Rust和Go语言")
    assert "miso" in tokens and "rust" in tokens and "go" in tokens
    assert "喜欢" in tokens and "语言" in tokens


def test_full_width_letters_and_digits_are_normalized() -> None:
    assert tokenize("ＰＹＴＨＯＮ ３") == tokenize("python 3")


def test_punctuation_and_empty_text_give_no_tokens() -> None:
    assert tokenize("") == []
    assert tokenize("  ，。！？...  ") == []


def test_query_and_document_meet_across_segmentations() -> None:
    document = set(tokenize("Miso 最近失眠，晚上一点以后才能睡着。"))
    assert set(tokenize("失眠")) <= document
    assert set(tokenize("睡眠")) & document  # a paraphrase still shares a character


def test_has_cjk() -> None:
    assert has_cjk("hello 世界")
    assert not has_cjk("hello world")


def test_one_language_rule_for_prompts_and_tokens() -> None:
    assert (language_of("我住在北京"), language_of("I live in Oslo")) == ("zh", "en")
    assert resolve_language("auto", "我住在北京") == "zh"
    assert resolve_language("auto", "I live in Oslo") == "en"
    assert resolve_language("en", "我住在北京") == "en"  # a pinned language wins
    with pytest.raises(ValueError, match="language must be one of auto, en, zh"):
        resolve_language("fr", "bonjour")
