"""Model calls and tokens by purpose (chat, retrieval, writer, summary): the meter and the
figures it keeps. Imports nothing else of memory/."""
