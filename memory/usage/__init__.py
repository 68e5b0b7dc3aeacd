"""Model calls and tokens by purpose (chat, retrieval, writer, summary): the meter (metering.py)
and the figures it keeps (counts.py). Imports nothing else of memory/."""
