"""Readers of the yes/no and multiple-choice benchmarks as their authors publish them → ITEMS.

One module per family: :mod:`~vlaudit.sources.benchmarks.yes_no` (POPE, MME, HallusionBench),
:mod:`~vlaudit.sources.benchmarks.choice` (MMStar, MMBench, SEED-Bench, ScienceQA) and
:mod:`~vlaudit.sources.benchmarks.choice_more` (MMMU, CV-Bench, AI2D); the name → reader table is
:mod:`vlaudit.sources.registry`.

The reader contract: ``read_<format>(source, *, images=None) -> BenchmarkRead`` where ``source`` is the
release's own file (JSON, JSONL, TSV or Parquet), a ``save_to_disk`` folder, a folder of Parquet files or
``hf-dataset:NAME[:CONFIG][@SPLIT]`` (:mod:`vlaudit.sources.rows`), and ``images`` the
:class:`~vlaudit.sources.rows.ImageFolder` that embedded images (Hugging Face Image columns, base64 TSV
cells) are written to once, named by content. The result holds typed
:class:`~vlaudit.sources.items.BenchmarkItem` rows and every excluded row with its reason. A malformed row is
one :class:`~vlaudit.errors.InputError` naming file, row and field; an answer that is none of the options is
an error, never a guess.
"""
