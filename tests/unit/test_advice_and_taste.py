"""Asked for a recommendation, the memories that say what the user likes or avoids come up even
without a word in common; asked what was recommended before, or what to do about what happened
to them, they do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.retrieval.embedder import OfflineEncoder
from memory.retrieval.query import read_query
from memory.text.preferences import asks_advice, asks_recommendation, states_preference
from tests.dated_memories import found, said

needs_model = pytest.mark.skipif(not OfflineEncoder.available(), reason="offline model missing")


# A user's chatter about music and food, and one standing taste that shares no word with the
# request below ("I can't stand …" against "recommend … albums").
MUSIC_CHAT = {
    "taste": said("I can't stand mainstream pop, it all sounds the same to me.", "01-05"),
    "concert": said("We went to a concert downtown last night, the band was loud.", "02-10"),
    "playlist": said("My brother made a playlist for the road trip.", "02-12"),
    "radio": said("The radio in my car is broken again.", "02-14"),
    "album": said("Have you heard the new album everyone talks about?", "02-15"),
    "piano": said("My daughter started piano lessons at school.", "02-16"),
    "guitar": said("Our neighbour plays guitar every evening.", "02-18"),
    "festival": said("There is a music festival in town this summer.", "02-20"),
}


@pytest.mark.parametrize(
    ("text", "advice"),
    [
        ("Can you recommend some albums for me to explore?", True),
        ("What are some good hotels for my stay in Rome?", True),
        ("Any tips for learning Spanish on my own?", True),
        ("能给我推荐几本书吗？", True),
        ("What did you recommend to me last week?", False),  # a past answer, not a new one
        ("You once suggested a podcast, what was it called?", False),
        ("你给我推荐过哪些电影？", False),
        ("Where do I live now?", False),
    ],
)
def test_a_request_for_advice_is_told_from_a_question_about_past_advice(
    text: str, advice: bool
) -> None:
    assert asks_advice(text) is advice
    assert asks_recommendation(text) is advice


# Advice about the user's own situation: the event decides, not their taste (issue 46).
STORY = ("My sister stopped talking to me after the wedding. I said something about her husband "
         "in front of the whole family and she left crying. It has been three weeks now and she "
         "does not answer my calls. Do you have any advice?")  # fmt: skip


@pytest.mark.parametrize(
    ("text", "recommendation"),
    [
        ("Can you recommend some albums for me to explore?", True),
        ("能给我推荐几本书吗？", True),
        ("What should I do during my visit to Orlando?", True),  # things to do: taste
        ("My boss yelled at me in front of everyone. What should I do?", False),
        ("How do I get over my breakup? Any tips?", False),
        ("我失恋了，你有什么建议吗？", False),
        ("我和室友吵架了，我该怎么办？推荐个办法吧", False),
        (STORY, False),  # a story that asks on the way
    ],
)
def test_only_a_recommendation_among_things_counts_as_asking_for_taste(
    text: str, recommendation: bool
) -> None:
    assert asks_recommendation(text) is recommendation
    assert read_query(text).advice is recommendation


@pytest.mark.parametrize(
    ("text", "taste"),
    [
        ("I refuse to use anything made by Apple.", True),
        ("User is vegan.", True),
        ("I really love jazz.", True),
        ("我不吃辣。", True),
        ("It looks like rain today.", False),  # "like" that is no liking
        ("I moved to Porto in March.", False),
    ],
)
def test_a_taste_or_constraint_is_read_in_either_language(text: str, taste: bool) -> None:
    assert states_preference(text) is taste


@needs_model
def test_asked_for_a_recommendation_the_users_taste_comes_first(tmp_path: Path) -> None:
    # Without the lift: the festival, the playlist, then the taste; with it the taste is next to
    # the festival, which shares "music" with the request.
    request = "What music should I listen to?"
    assert "taste" in found(tmp_path / "ask", MUSIC_CHAT, request)[:2]


@needs_model
def test_asked_what_to_do_about_an_event_the_event_comes_before_tastes(tmp_path: Path) -> None:
    # A store of tastes and one event sharing no word with the question: with the tastes
    # weighed double for any request for advice, "I prefer hiking" came first.
    items = {
        "event": said("My sister stopped talking to me after I insulted her husband.", "02-01"),
        "tea": said("I love green tea more than coffee.", "02-02"),
        "jazz": said("I really enjoy jazz and hate loud rock.", "02-03"),
        "hiking": said("I prefer hiking to the gym.", "02-04"),
        "spicy": said("I can't stand spicy food.", "02-05"),
        "dogs": said("I don't like big dogs, they scare me.", "02-06"),
        "films": said("My favourite films are old westerns.", "02-07"),
    }
    question = "She hasn't picked up the phone for three weeks. What should I do?"
    assert found(tmp_path / "event", items, question)[0] == "event"


@needs_model
def test_asked_what_was_recommended_the_taste_gets_no_lift(tmp_path: Path) -> None:
    told = said("You recommended the album Blue by Joni Mitchell.", "02-21")
    items = {**MUSIC_CHAT, "told": told}
    assert found(tmp_path / "past", items, "Which album did you recommend to me?")[0] == "told"
