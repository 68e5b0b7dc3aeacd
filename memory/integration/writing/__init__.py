"""A finished turn on its way to the memory writer: ltm_write (the chat graph's last node), the
admission verdict, server runs on the user's writer thread, server-mode batches and their mirror,
read-your-writes, and the memory_writer and memory_consolidator graphs. Imports the rest of
graph/ and memory/."""
