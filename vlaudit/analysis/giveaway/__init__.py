"""What a benchmark gives away: the caption-only classifier and the per-benchmark giveaway audit."""
