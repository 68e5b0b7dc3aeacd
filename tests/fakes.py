"""Stand-in chat models: the one fake the tests allow, since no model provider is reachable."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


class ScriptedModel(GenericFakeChatModel):
    """Plays AIMessages in order (an Exception item is raised) and keeps every prompt it saw.

    langchain-core's fake raises on `bind_tools`; this one returns itself, so agents and the
    chat graph can bind their tools to it."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        item = next(self.messages)
        if isinstance(item, BaseException):
            raise item
        message = AIMessage(content=item) if isinstance(item, str) else item
        return ChatResult(generations=[ChatGeneration(message=message)])


class ScriptedAnswers:
    """A duck-typed model for the retrievers: `invoke` answers from a script (text or an
    AIMessage; an Exception is raised) and records each call. After the script, it answers
    `when_done`, or raises IndexError when that is None (a call nobody scripted)."""

    def __init__(self, *answers: Any, when_done: str | None = None) -> None:
        self.answers = list(answers)
        self.when_done = when_done
        self.calls: list[list[BaseMessage]] = []

    def invoke(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> AIMessage:
        self.calls.append(messages)
        if not self.answers and self.when_done is not None:
            return AIMessage(content=self.when_done)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer if isinstance(answer, AIMessage) else AIMessage(content=answer)


class EchoingModel(BaseChatModel):
    """A summariser as verbose as many real models are on long input, or worse: it answers
    with its whole prompt, `times` over, and ignores `max_tokens` (kept, with every call's
    other options, in `calls`; the length of each answer in `answered`)."""

    times: int = 1
    calls: list[dict[str, Any]] = Field(default_factory=list)
    answered: list[int] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "echoing"

    def bind_tools(self, tools: Any, **kwargs: Any) -> EchoingModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls.append(dict(kwargs))
        text = "\n".join(str(m.content) for m in messages)
        answer = AIMessage(content="\n".join([text] * self.times))
        self.answered.append(len(answer.content))
        return ChatResult(generations=[ChatGeneration(message=answer)])
