"""Forgetting for good: which memories a user asked to forget and the fingerprints of what
derived text must not keep (forgotten, fingerprint), and erasure from every place the agent looks
(erasure/). Imports the store and text."""
