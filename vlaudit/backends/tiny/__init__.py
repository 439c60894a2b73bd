"""Tiny random models built from config offline (chat LLMs, Mistral3, dual encoders) and the real tokenizers they use, for smoke tests and offline tests."""
