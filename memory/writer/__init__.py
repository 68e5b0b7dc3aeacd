"""The memory writer: the `Turn` it is handed (turn.py), the memory agent and its tools
(consumer.py,
tools.py), the durable queue, journal and trace. Imports retrieval (the agent's searches),
admission, the store, text, usage and prompts; it is handed a `WriteTarget`, never the facade.
The agent needs LangChain; the queue, journal and trace do not."""
