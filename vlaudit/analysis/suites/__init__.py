"""The compositionality suites: registry (reader + official metric per suite), exact cycles, the suite audit."""
