"""What of an assistant reply counts as quoting an archive search result."""

from __future__ import annotations

from memory.archive import ArchivedMessage, Hit, SearchResult, render
from memory.archive.quotes import QUOTE_MARK, is_archive_result, strip_quotes

SAID = "My sister Mei moved to Porto last spring and teaches piano there."
SAID_ZH = "我下周要去上海出差，住在外滩附近的酒店。"


def result(*texts: str) -> str:
    hits = tuple(
        Hit("t1", ArchivedMessage("ada", "t1", "c1", f"m{i}", "user", text, 1_000.0 + i))
        for i, text in enumerate(texts)
    )
    return render(SearchResult("q", hits))


def test_an_archive_result_is_recognised_by_its_fence() -> None:
    assert is_archive_result(result(SAID))
    assert not is_archive_result("It is 10:00 in Lisbon.")


def test_the_quoted_sentences_leave_and_the_reply_s_own_words_stay() -> None:
    found = result(SAID, SAID_ZH)
    reply = (
        f'I found it. You told me: "{SAID}" Do you want to call her?\n上次你说：{SAID_ZH}祝你顺利！'
    )
    stripped = strip_quotes(reply, [found])
    assert "Porto" not in stripped and "上海" not in stripped
    assert stripped.count(QUOTE_MARK) == 2
    assert "I found it." in stripped and "Do you want to call her?" in stripped
    assert "祝你顺利" in stripped


def test_nothing_is_taken_without_a_result_or_a_quote() -> None:
    reply = "Porto is lovely in spring. Mei must be happy there."
    assert strip_quotes(reply, []) == reply
    assert strip_quotes(reply, [result("The plumber comes on Friday at nine.")]) == reply
    assert strip_quotes("Yes, Porto.", [result(SAID)]) == "Yes, Porto."  # too short to quote
