"""What `make chat` shows of a streamed reply (graph/cli/streaming.py)."""

from __future__ import annotations

from graph.cli.streaming import ReplyPrinter


def shown(pieces: list[tuple[str, str]], reply: str) -> str:
    screen: list[str] = []
    printer = ReplyPrinter(write=screen.append)
    for message, piece in pieces:
        printer.piece(message, piece)
    printer.finish(reply)
    return "".join(screen)


def test_a_streamed_reply_is_shown_once_with_its_prefix() -> None:
    pieces = [("m1", "Hello "), ("m1", "Ana, nice "), ("m1", "to meet you.")]
    assert shown(pieces, "Hello Ana, nice to meet you.") == "bot> Hello Ana, nice to meet you.\n"


def test_a_call_written_as_text_is_held_back_and_the_answer_after_it_shown() -> None:
    call = [("m1", '```json\n{"name": '), ("m1", '"search_memory"}```')]
    pieces = [*call, ("m2", "Your dog is Rex.")]
    assert shown(pieces, "Your dog is Rex.") == "bot> Your dog is Rex.\n"


def test_a_sentence_before_a_tool_call_is_followed_by_the_final_reply_on_its_own_line() -> None:
    pieces = [("m1", "Let me look that up."), ("m2", "Your dog is called Rex.")]
    assert shown(pieces, "Your dog is called Rex.") == (
        "bot> Let me look that up.\nbot> Your dog is called Rex.\n"
    )


def test_a_reply_the_node_replaced_is_shown_whole_after_what_was_streamed() -> None:
    pieces = [("m1", "<tool_response>Paris is the capital.</tool_response>")]
    assert shown(pieces, "Paris is the capital.") == "bot> Paris is the capital.\n"
    streamed = [("m1", "Something went wrong here")]
    assert shown(streamed, "Sorry, I could not answer.") == (
        "bot> Something went wrong here\nbot> Sorry, I could not answer.\n"
    )


def test_a_short_reply_that_never_filled_the_hold_is_shown_at_the_end() -> None:
    assert shown([("m1", "Hi!")], "Hi!") == "bot> Hi!\n"
