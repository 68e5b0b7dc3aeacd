"""What `make chat` prints of a reply while the chat model is still writing it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

# A reply is held back until this many characters are in: enough to see whether the model is
# writing a tool call as text (`{"name": ...}`, in a code fence) or the `<tool_response>` tags of
# its chat template, which the agent node turns into a call or strips before the user sees them.
HOLD_CHARACTERS = 12
NOT_FOR_THE_USER = ("{", "[", "`", "<")


def to_terminal(text: str) -> None:
    """`text` on stdout as it is (no newline added) and at once."""
    sys.stdout.write(text)
    sys.stdout.flush()


@dataclass
class ReplyPrinter:
    """Give it the chat model's pieces as they arrive (`piece`, LocalSession.say's `on_text`),
    then the reply the turn ended with (`finish`); it writes what the user should see. A message
    that looks like a call written as text is never shown; when what was shown is not the final
    reply (the model wrote a sentence before a tool call, or the node replaced an empty answer),
    the final one is written whole on a line of its own."""

    write: Callable[[str], object] = to_terminal
    prefix: str = "bot> "
    _message: str | None = field(default=None, init=False)
    _held: str = field(default="", init=False)
    _shown: str = field(default="", init=False)
    _streaming: bool = field(default=False, init=False)
    _silenced: bool = field(default=False, init=False)

    def piece(self, message_id: str, text: str) -> None:
        """The next piece `text` of the chat model's message `message_id`."""
        if message_id != self._message:
            if self._streaming:
                self.write("\n")
            self._message, self._held, self._shown = message_id, "", ""
            self._streaming = self._silenced = False
        if self._silenced or not text:
            return
        if self._streaming:
            self._shown += text
            self.write(text)
            return
        self._held += text
        start = self._held.lstrip()
        if start.startswith(NOT_FOR_THE_USER):
            self._silenced = True
        elif len(start) >= HOLD_CHARACTERS:
            self._streaming, self._shown = True, start
            self.write(self.prefix + start)

    def finish(self, reply: str) -> None:
        """The turn is over and its reply is `reply`."""
        if self._streaming and self._shown.strip() == reply.strip():
            self.write("\n")
            return
        separator = "\n" if self._streaming else ""
        self.write(f"{separator}{self.prefix}{reply}\n")
