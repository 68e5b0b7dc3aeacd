"""Make it yours: the persona, the system prompt, the memory sections and what the writer keeps."""

from __future__ import annotations

from collections.abc import Mapping

from memory.integration import AppText, MemorySection

LIBRARY = AppText()  # the library's own sections and writer's rules, to start from

# Who the assistant is. A user who edits their persona in the memory editor gets theirs instead;
# nobody's store holds a copy of this one, so a change here reaches every user.
PERSONA = {
    "en": "You are a helpful, friendly assistant with long-term memory of this user.",
    "zh": "你是一位友善、乐于助人的助手，拥有关于这位用户的长期记忆。",
}

# The chat's system prompt, in two parts. SYSTEM_PROMPTS holds what stays the same from turn to
# turn ({persona} and {tools} filled in; {tools} is one sentence per feature that is on,
# TOOL_GUIDANCE, so the model never hears of a tool it does not have). CONTEXT_PROMPTS holds what
# changes every turn ({current_time}, {core_context}, {memories}); for an OpenAI-compatible model
# it is sent as a second system message just before the user's latest message, so the
# instructions and the conversation before it are the same prefix every turn and llama-server,
# vLLM or OpenAI reuse their cached reading of it (GULFSTREAM_PROMPT_LAYOUT, graph/prompting.py).
# The closing line is for small models: ending on a tool sentence, the 1.5B model repeated it to
# the user as its answer; told only to "answer", it restated the user ("You said hello and
# introduced yourself as …").
SYSTEM_PROMPTS = {
    "en": """{persona}

Use what you remember when it helps, and do not pretend to remember what is not listed. Each
memory shows the day it was said; when two disagree, the later one holds.{tools}

Reply to what the user just said, briefly and in your own words: answer a question, respond to
news; do not repeat or summarise their message. When they ask you to forget something, say that
you will forget it.""",
    "zh": """{persona}

在有帮助时运用你记得的内容；没有列出的内容不要假装记得。每条记忆都标有说的日期；
两条记忆不一致时，以较晚的为准。{tools}

用你自己的话简短地回应用户刚说的话：回答问题、回应他们的消息；不要复述或总结他们的话。
用户要求你忘记某件事时，告诉他们你会忘掉它。""",
}

CONTEXT_PROMPTS = {
    "en": """Current time: {current_time}

{core_context}

{memories}""",
    "zh": """当前时间：{current_time}

{core_context}

{memories}""",
}

# A sentence for a chat tool (graph/tools.py) the prompt should point out, said only while the
# tool is bound; a tool without one is known to the model by its docstring alone.
TOOL_GUIDANCE = {
    "en": {
        "search_memory": "If you need to recall more than what is shown, call the "
        "`search_memory` tool.",
        "search_conversations": "To find what was said in earlier conversations (or earlier in "
        "this one), call `search_conversations`, with dates you work out from the current time "
        'for "last Tuesday" or "this week".',
        "set_reminder": "When the user asks to be reminded of something, call `set_reminder` "
        "with what and when, in the user's own words.",
    },
    "zh": {
        "search_memory": "如果需要回忆更多内容，请调用 `search_memory` 工具。",
        "search_conversations": "要查找以前的对话（或本次对话较早部分）中说过的话，请调用 "
        '`search_conversations`，"上周二""这周"之类的日期请根据当前时间换算后传入。',
        "set_reminder": "用户请你提醒某事时，调用 `set_reminder`，按用户的原话传入提醒内容和时间。",
    },
}

# The memory sections the writer files memories under, per language: the library's six
# (memory/prompts/writer.py, each a `MemorySection(name, hint, kind)`). To file under your own,
# replace them here with a dict of the same shape: the writer, the offline rules, the core
# context and the retriever's examples find them by `kind`, whatever you name them.
SECTIONS: Mapping[str, tuple[MemorySection, ...]] = LIBRARY.sections

# What the memory writer keeps and how it writes a memory, per language: the library's rules
# (memory/prompts/writer_instructions.py). Both of the writer's protocols (tool calls, JSON) send
# this text under "Principles" and add their own part (how to call the tools or answer in JSON,
# and SECTIONS). To change what is kept, give your own text per language here ("en", "zh"; a
# language left out gets the "en" text), for example one rule more:
#   WRITER_INSTRUCTIONS = {
#       "en": LIBRARY.writer_instructions["en"] + "\n7. Keep nothing about the user's health.",
#       "zh": LIBRARY.writer_instructions["zh"] + "\n7. 不要记用户的健康状况。",
#   }
WRITER_INSTRUCTIONS: Mapping[str, str] = LIBRARY.writer_instructions
