"""``vllm:``: the yes/no margins of ``hf:`` computed by vLLM's offline engine, and the engine twin (the same weights scored by the other engine)."""
