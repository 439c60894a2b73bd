"""``hf:`` and ``hf-lm:``: the transformers backends — a chat LLM's yes/no margins, greedy decoding, the shared-prefix KV cache, a text-only causal LM."""
