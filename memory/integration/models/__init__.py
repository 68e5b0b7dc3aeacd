"""Chat models and embeddings from "provider/model": the loader, and the offline rule-based model
that lets every command run without a key."""
