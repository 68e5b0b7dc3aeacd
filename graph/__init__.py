"""Gulfstream's app: the chat graph (agent.py), its agent node, tools, context, state and prompt,
and the command line, over the memory library (`memory.integration`). Importing it hands the
library this app's memory sections and the writer's instructions (prompts/persona.py)."""

from memory.integration import AppText
from prompts.persona import SECTIONS, WRITER_INSTRUCTIONS

AppText(sections=SECTIONS, writer_instructions=WRITER_INSTRUCTIONS).use()
