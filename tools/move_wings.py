"""Group the flat wings by role: backends/ by engine, results/vca/, scoring/run/ (docs/architecture.md).

Run from the repository root, on a tree that has not had the moves yet::

    python tools/move_wings.py            # moves the files with `git mv` and rewrites every reference
    python tools/move_wings.py --check    # says what it would do, changes nothing

What it does, in order:

1. ``git mv`` each file of :data:`MOVES` (old path -> new path) and writes the ``__init__.py`` of each new
   package (:data:`PACKAGES`), ``git add``-ed;
2. rewrites every reference to a moved module, by module path (never by line number, so files edited since
   this script was written are rewritten as well): dotted paths anywhere in the text (imports,
   ``"module:function"`` strings of the backend registry and the facade, ``mock.patch("...")`` targets,
   ``:mod:`` roles, import-linter contracts and mypy overrides), ``from PACKAGE import module`` imports (kept
   under their old local name with ``as``), and file paths (``vlaudit/backends/hf_mllm.py`` and
   ``backends/hf_mllm.py``), in vlaudit/, tests/, docs/, benchmarks/, tools/, pyproject.toml, mkdocs.yml,
   Makefile and README.md (CHANGELOG.md is history and is left as it is);
3. renames the backend classes to one casing (:data:`CLASS_RENAMES`);
4. sorts the imports it touched with ``ruff check --fix --select I`` (when ruff can be found).

It is idempotent: a move already made is passed over, and a second run rewrites nothing (a dotted path is
rewritten only when it names a module of the old layout that is gone). A file that is in a moved folder but
not in the table (added after this script was written) is left where it stands and named at the end; a
source that is missing while its target is absent too is named and passed over.

Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

# old path -> new path, from the repository root
MOVES: tuple[tuple[str, str], ...] = (
    # backends/hf/: the transformers backends (hf:, hf-lm:) and what only they use
    ("vlaudit/backends/hf_mllm.py", "vlaudit/backends/hf/mllm.py"),
    ("vlaudit/backends/hf_generate.py", "vlaudit/backends/hf/generate.py"),
    ("vlaudit/backends/hf_prefix_cache.py", "vlaudit/backends/hf/prefix_cache.py"),
    ("vlaudit/backends/hf_lm.py", "vlaudit/backends/hf/lm.py"),
    ("vlaudit/backends/text_logprob.py", "vlaudit/backends/hf/text_logprob.py"),
    ("vlaudit/backends/model_source.py", "vlaudit/backends/hf/model_source.py"),
    # backends/vllm/: vLLM's offline engine and the engine twin (the same weights, the other engine)
    ("vlaudit/backends/vllm_mllm.py", "vlaudit/backends/vllm/mllm.py"),
    ("vlaudit/backends/engine_twin.py", "vlaudit/backends/vllm/engine_twin.py"),
    # backends/openai/: an OpenAI-compatible server
    ("vlaudit/backends/openai_endpoint.py", "vlaudit/backends/openai/endpoint.py"),
    ("vlaudit/backends/openai_endpoint_answers.py", "vlaudit/backends/openai/answers.py"),
    ("vlaudit/backends/openai_endpoint_http.py", "vlaudit/backends/openai/pool.py"),
    ("vlaudit/backends/openai_server_report.py", "vlaudit/backends/openai/server_report.py"),
    # backends/dual/: the dual encoders (hf-clip:, open_clip:)
    ("vlaudit/backends/hf_clip.py", "vlaudit/backends/dual/hf_clip.py"),
    ("vlaudit/backends/open_clip_backend.py", "vlaudit/backends/dual/open_clip_backend.py"),
    ("vlaudit/backends/dual_perturbations.py", "vlaudit/backends/dual/perturbations.py"),
    # backends/mistral/: Ministral through mistral-common
    ("vlaudit/backends/mistral_common_backend.py", "vlaudit/backends/mistral/mllm.py"),
    ("vlaudit/backends/mistral_generate.py", "vlaudit/backends/mistral/generate.py"),
    # backends/tiny/: the tiny offline models the tests and `vlaudit models tiny` build
    ("vlaudit/backends/tiny_mllm.py", "vlaudit/backends/tiny/mllm.py"),
    ("vlaudit/backends/tiny_dual.py", "vlaudit/backends/tiny/dual.py"),
    ("vlaudit/backends/tiny_mistral.py", "vlaudit/backends/tiny/mistral.py"),
    ("vlaudit/backends/tiny_families.py", "vlaudit/backends/tiny/families.py"),
    ("vlaudit/backends/real_tokenizers.py", "vlaudit/backends/tiny/real_tokenizers.py"),
    # backends/prompt/: the words a chat backend sends and reads
    ("vlaudit/backends/verbalizers.py", "vlaudit/backends/prompt/verbalizers.py"),
    ("vlaudit/backends/letters.py", "vlaudit/backends/prompt/letters.py"),
    ("vlaudit/backends/prompt_wording.py", "vlaudit/backends/prompt/wording.py"),
    # results/vca/: the Visual Credit Audit's result records
    ("vlaudit/results/vca.py", "vlaudit/results/vca/outputs.py"),
    ("vlaudit/results/vca_audit.py", "vlaudit/results/vca/audit.py"),
    ("vlaudit/results/vca_benchmark.py", "vlaudit/results/vca/benchmark.py"),
    ("vlaudit/results/vca_checks.py", "vlaudit/results/vca/checks.py"),
    ("vlaudit/results/vca_coverage.py", "vlaudit/results/vca/coverage.py"),
    ("vlaudit/results/vca_edits.py", "vlaudit/results/vca/edits.py"),
    ("vlaudit/results/vca_factorial.py", "vlaudit/results/vca/factorial.py"),
    ("vlaudit/results/vca_filter.py", "vlaudit/results/vca/filter.py"),
    ("vlaudit/results/vca_proxies.py", "vlaudit/results/vca/proxies.py"),
    ("vlaudit/results/vca_run_sections.py", "vlaudit/results/vca/run_sections.py"),
    ("vlaudit/results/vca_validity.py", "vlaudit/results/vca/validity.py"),
    # scoring/run/: how a run is carried out and kept (plan, shards, executors, cache, folder, record);
    # the scorers (features, margins of dual encoders, suites, stability, checks) stay in scoring/
    ("vlaudit/scoring/runner.py", "vlaudit/scoring/run/runner.py"),
    ("vlaudit/scoring/plan.py", "vlaudit/scoring/run/plan.py"),
    ("vlaudit/scoring/shards.py", "vlaudit/scoring/run/shards.py"),
    ("vlaudit/scoring/cache.py", "vlaudit/scoring/run/cache.py"),
    ("vlaudit/scoring/executors.py", "vlaudit/scoring/run/executors.py"),
    ("vlaudit/scoring/ray_executor.py", "vlaudit/scoring/run/ray_executor.py"),
    ("vlaudit/scoring/manifest.py", "vlaudit/scoring/run/manifest.py"),
    ("vlaudit/scoring/image_check.py", "vlaudit/scoring/run/image_check.py"),
    ("vlaudit/scoring/run_folder.py", "vlaudit/scoring/run/folder.py"),
    ("vlaudit/scoring/run_parts.py", "vlaudit/scoring/run/parts.py"),
    ("vlaudit/scoring/run_arguments.py", "vlaudit/scoring/run/arguments.py"),
    ("vlaudit/scoring/run_spec.py", "vlaudit/scoring/run/spec.py"),
    ("vlaudit/scoring/finished_run.py", "vlaudit/scoring/run/finished.py"),
)

# the new packages and the docstring of each __init__.py
PACKAGES: dict[str, str] = {
    "vlaudit/backends/hf": "``hf:`` and ``hf-lm:``: the transformers backends — a chat LLM's yes/no margins, "
                           "greedy decoding, the shared-prefix KV cache, a text-only causal LM.",
    "vlaudit/backends/vllm": "``vllm:``: the yes/no margins of ``hf:`` computed by vLLM's offline engine, and "
                             "the engine twin (the same weights scored by the other engine).",
    "vlaudit/backends/openai": "``openai:URL#MODEL``: yes/no margins from an OpenAI-compatible chat-completions "
                               "server — the backend, its pool of servers, the answers it reads, what a server "
                               "says of itself.",
    "vlaudit/backends/dual": "``hf-clip:`` and ``open_clip:``: the dual encoders (FeatureBackends) and their "
                             "math-preserving perturbations.",
    "vlaudit/backends/mistral": "Ministral (Mistral3) scored through mistral-common, as the VCA paper does.",
    "vlaudit/backends/tiny": "Tiny random models built from config offline (chat LLMs, Mistral3, dual "
                             "encoders) and the real tokenizers they use, for smoke tests and offline tests.",
    "vlaudit/backends/prompt": "The words a chat backend sends and reads: the answer verbalizers, the K-way "
                               "letter interface, the question wording (torch-free).",
    "vlaudit/results/vca": "Typed results of the Visual Credit Audit: :mod:`vlaudit.results.vca.outputs` holds "
                           "one class per JSON file a command writes; the other modules hold the records "
                           "inside them.",
    "vlaudit/scoring/run": "How a scoring run is carried out and kept: its spec and recorded arguments, the "
                           "plan of forwards, shards and executors (in process, Ray), the chunk cache, the run "
                           "folder, the manifest and the rerun of a finished run.",
}

# one casing for the backend classes: CapWords with an acronym written as a word (Hf, Vllm, Mllm, Lm, Clip),
# as HfOptions, VllmOptions, OpenClipBackend and CausalLmScorer already are; the class is named after its
# prefix (hf: -> Hf, hf-clip: -> HfClip, vllm: -> Vllm, openai: -> OpenAI, the brand's own spelling)
CLASS_RENAMES: dict[str, str] = {
    "HFMLLMBackend": "HfMllmBackend",
    "VllmMLLMBackend": "VllmMllmBackend",
    "HFDualBackend": "HfClipBackend",
    "EndpointBackend": "OpenAIEndpointBackend",
}

# merged files: the pieces (new paths of MOVES) are appended to the first, in this order, when the merged file
# stays under MERGE_LIMIT lines; otherwise each piece stays a file of its own at its new path. The run folder
# holds what a run records (its arguments, compared on a rerun) and the rerun of a finished run: a run enters
# one room for the three, not three (docs/architecture.md, the walk).
MERGES: dict[str, tuple[str, ...]] = {
    "vlaudit/scoring/run/folder.py": ("vlaudit/scoring/run/arguments.py", "vlaudit/scoring/run/finished.py"),
}
MERGE_LIMIT = 420

# file names written without their folder, which the path rule cannot place: written out whole
BARE_NAMES: dict[str, str] = {
    "(``backends/torch_perturbations.py``, ``dual_perturbations.py``)":
        "(``backends/torch_perturbations.py``, ``backends/dual/perturbations.py``)",
}

# folders whose loose files the table sorts; a file here that the table does not name is reported
SORTED_FOLDERS = ("vlaudit/backends", "vlaudit/results", "vlaudit/scoring")
# files of those folders that stay where they are, on purpose
STAYS = {
    "vlaudit/backends/__init__.py", "vlaudit/backends/base.py", "vlaudit/backends/registry.py",
    "vlaudit/backends/options.py", "vlaudit/backends/model_options.py", "vlaudit/backends/dtypes.py",
    "vlaudit/backends/conformance.py",
    "vlaudit/backends/torch_utils.py", "vlaudit/backends/torch_perturbations.py",
    "vlaudit/backends/yesno_common.py",
    # moved beside cli.py by another change, not by this script
    "vlaudit/backends/library_logs.py",
    "vlaudit/results/__init__.py", "vlaudit/results/catalog.py", "vlaudit/results/cells.py",
    "vlaudit/results/columns.py", "vlaudit/results/compare.py", "vlaudit/results/cycle_experiments.py",
    "vlaudit/results/cycles.py", "vlaudit/results/demo.py", "vlaudit/results/giveaway.py",
    "vlaudit/results/manifest.py", "vlaudit/results/missing.py", "vlaudit/results/suites.py",
    "vlaudit/results/versioned.py",
    "vlaudit/scoring/__init__.py", "vlaudit/scoring/features.py", "vlaudit/scoring/dual_margins.py",
    "vlaudit/scoring/dual_stability.py", "vlaudit/scoring/stability.py", "vlaudit/scoring/generate_check.py",
    "vlaudit/scoring/lm_texts.py", "vlaudit/scoring/mllm_cycle_scores.py", "vlaudit/scoring/suite_scores.py",
    "vlaudit/scoring/suite_spec.py",
}

# where references are rewritten: folders (every text file of these suffixes) and single files
REWRITE_FOLDERS = ("vlaudit", "tests", "docs", "benchmarks", "tools")
REWRITE_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".ini"}
REWRITE_FILES = ("pyproject.toml", "mkdocs.yml", "Makefile", "README.md")
# this script and its test hold the old layout on purpose
NOT_REWRITTEN = {"tools/move_wings.py", "tests/test_wings_layout.py"}

# a dotted path, but not the package of a `from ... import` statement, which FROM_IMPORT rewrites seeing the
# names it imports and marks with MARK until the dotted paths are done
MARK = "\x00"
DOTTED = re.compile(r"(?<![\w.\x00])vlaudit(?:\.[A-Za-z_]\w*)+")
PATHS = re.compile(r"(?<![\w/.])((?:vlaudit/)?)((?:backends|results|scoring)/\w+\.py)\b")
FROM_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)from[ \t]+(?P<package>vlaudit(?:\.\w+)*)[ \t]+import[ \t]+"
    r"(?:\((?P<group>[^)]*)\)|(?P<names>[^\n#(]+?))[ \t]*(?P<comment>#[^\n]*)?$",
    re.MULTILINE,
)


def module_of(path: str) -> str:
    """``vlaudit/backends/hf_mllm.py`` -> ``vlaudit.backends.hf_mllm`` (a package's ``__init__.py`` -> it)."""
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def modules_today(root: Path) -> set[str]:
    """Every module and package of vlaudit/ as the tree stands now."""
    return {module_of(p.relative_to(root).as_posix()) for p in (root / "vlaudit").rglob("*.py")}


class Rewriter:
    """Rewrites the references to moved modules in one text, knowing the old and the new layout."""

    def __init__(self, moves: dict[str, str], new_modules: set[str]) -> None:
        self.moves = moves  # old module -> new module
        self.new_modules = new_modules  # every module of the layout after the moves
        self.paths = {old.replace(".", "/") + ".py": new.replace(".", "/") + ".py" for old, new in moves.items()}

    def dotted(self, token: str) -> str:
        """A dotted path that starts with a moved module, rewritten; any other is left as it is.

        The longest moved module the token starts with is replaced, unless a longer module of the new layout
        is what the token names (``vlaudit.results.vca.audit`` is the new layout's, not ``vlaudit.results.vca``
        followed by ``audit``): a token already rewritten is left alone, so a second run changes nothing.
        """
        parts = token.split(".")
        for n in range(len(parts), 1, -1):
            head = ".".join(parts[:n])
            if head in self.new_modules and head not in self.moves:
                return token
            if head in self.moves:
                return ".".join([self.moves[head], *parts[n:]])
        return token

    def from_import(self, match: re.Match[str]) -> str:
        """``from vlaudit.backends import hf_mllm, base`` -> one import per moved module, under its old name."""
        body = match["group"] if match["group"] is not None else match["names"]
        entries = [e.strip() for e in body.replace("\n", " ").split(",") if e.strip()]
        names = [entry.partition(" as ")[0].strip() for entry in entries]
        package = match["package"]
        if not (package in self.new_modules and all(f"{package}.{n}" in self.new_modules for n in names)):
            package = self.dotted(package)  # else: the new layout's package (vlaudit.results.vca), importing its modules
        moved, kept = [], []
        for entry in entries:
            name, _, alias = (s.strip() for s in entry.partition(" as "))
            old = f"{match['package']}.{name}"
            if old in self.moves:
                new_package, _, new_name = self.moves[old].rpartition(".")
                local = alias or name
                moved.append(f"from {MARK}{new_package} import {new_name}"
                             + (f" as {local}" if local != new_name else ""))
            else:
                kept.append(entry)
        if not moved:
            start = match.start("package") - match.start()
            return match.group(0)[:start] + MARK + package + match.group(0)[start + len(match["package"]):]
        indent = match["indent"]
        lines = [f"{indent}{line}" for line in moved]
        if kept:
            lines.insert(0, f"{indent}from {MARK}{package} import {', '.join(kept)}")
        if match["comment"]:
            lines[0] += f"  {match['comment']}"
        return "\n".join(lines)

    def path(self, match: re.Match[str]) -> str:
        prefix, rest = match.group(1), match.group(2)
        new = self.paths.get(f"vlaudit/{rest}")
        if new is None:
            return match.group(0)
        return prefix + new.removeprefix("vlaudit/")

    def __call__(self, text: str) -> str:
        text = FROM_IMPORT.sub(self.from_import, text)
        text = DOTTED.sub(lambda m: self.dotted(m.group(0)), text).replace(MARK, "")
        text = PATHS.sub(self.path, text)
        for old, new in CLASS_RENAMES.items():
            text = re.sub(rf"\b{old}\b", new, text)
        for old, new in BARE_NAMES.items():
            text = text.replace(old, new)
        return text


def _parts(text: str) -> tuple[str, str | None, list[str], str]:
    """A module's text cut into (the lines before its docstring, the docstring's source, its leading imports
    (``from __future__`` left out), the rest)."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    body = list(tree.body)
    doc = None
    start = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
            body[0].value.value, str):
        doc = "".join(lines[body[0].lineno - 1:body[0].end_lineno])
        start = body[0].end_lineno or 0
        body = body[1:]
    imports: list[str] = []
    end = start
    while body and isinstance(body[0], ast.Import | ast.ImportFrom):
        node = body.pop(0)
        segment = "".join(lines[node.lineno - 1:node.end_lineno])
        if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            imports.append(segment)
        end = node.end_lineno or end
    return "".join(lines[:0]), doc, imports, "".join(lines[end:])


def _doc_inside(doc: str) -> str:
    quoted = doc.strip()
    if not (quoted.startswith('"""') and quoted.endswith('"""')):
        raise ValueError("not a plain triple-quoted docstring")
    return quoted[3:-3].strip()


def merged_text(texts: list[str], group: set[str]) -> str:
    """Several modules as one: the docstrings as paragraphs of one, the imports together (less the imports of
    each other), the bodies in order. ``group`` holds the module names (old and new) of the pieces."""
    docs, imports, bodies = [], [], []
    for text in texts:
        _, doc, heads, rest = _parts(text)
        if doc is not None:
            docs.append(_doc_inside(doc))
        for head in heads:
            node = ast.parse(head).body[0]
            if isinstance(node, ast.ImportFrom) and node.module in group:
                continue
            if head not in imports:
                imports.append(head)
        bodies.append(rest.strip("\n"))
    doc = '"""' + "\n\n".join(docs) + '\n"""\n' if docs else ""
    return doc + "\nfrom __future__ import annotations\n\n" + "".join(imports) + "\n\n" + "\n\n\n".join(
        bodies) + "\n"


def top_level_names(text: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def rewriter_for(root: Path, merged: set[str]) -> Rewriter:
    """The rewriter of the table: every old module to its new one (a merged piece to the file it went into)."""
    pieces = {piece: into for into, group in MERGES.items() for piece in group}
    moves = {module_of(old): module_of(pieces[new] if new in merged else new) for old, new in MOVES}
    new_modules = (modules_today(root) - set(moves)) | set(moves.values()) | {module_of(p) for p in PACKAGES}
    return Rewriter(moves, new_modules)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True)


def move(root: Path, old: str, new: str) -> None:
    """``git mv``; a file git does not track yet is renamed and added."""
    if subprocess.run(["git", "ls-files", "--error-unmatch", old], cwd=root, capture_output=True).returncode:
        (root / old).rename(root / new)
        git(root, "add", new)
    else:
        git(root, "mv", old, new)


def remove(root: Path, old: str) -> None:
    """``git rm`` of a merged piece (its text, edited or not, is in the merged file already)."""
    if subprocess.run(["git", "ls-files", "--error-unmatch", old], cwd=root, capture_output=True).returncode:
        (root / old).unlink()
    else:
        git(root, "rm", "-q", "-f", old)


def files_to_rewrite(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder in REWRITE_FOLDERS:
        base = root / folder
        if base.is_dir():
            found += [p for p in base.rglob("*") if p.is_file() and p.suffix in REWRITE_SUFFIXES
                      and "__pycache__" not in p.parts and p.relative_to(root).as_posix() not in NOT_REWRITTEN]
    found += [root / name for name in REWRITE_FILES if (root / name).is_file()]
    return sorted(set(found))


def find_ruff() -> list[str] | None:
    for command in ([sys.executable, "-m", "ruff"], [shutil.which("ruff") or ""]):
        if not command[-1]:
            continue
        try:
            subprocess.run([*command, "--version"], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            continue
        return command
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="say what would be done; change nothing")
    args = parser.parse_args(argv)
    root = Path.cwd()
    if not (root / "vlaudit" / "__init__.py").is_file() or not (root / ".git").exists():
        print("move_wings: run this from the repository root (where vlaudit/ and .git are)", file=sys.stderr)
        return 2

    source_of = {new: old for old, new in MOVES}
    pieces = {piece: into for into, group in MERGES.items() for piece in group}
    pending, done, missing = [], [], []
    for old, new in MOVES:
        old_there, new_there = (root / old).exists(), (root / new).exists()
        if old_there and new_there:
            print(f"move_wings: both {old} and {new} exist; merge them by hand first", file=sys.stderr)
            return 2
        merged_already = new in pieces and not old_there and (root / pieces[new]).exists()
        (pending if old_there else done if new_there or merged_already else missing).append((old, new))
    # the merges to make now (every piece still at its old path, the result under the limit), and made before
    merge_now: dict[str, str] = {}
    merged: set[str] = set()
    for into, group in MERGES.items():
        olds = [source_of[into], *(source_of[piece] for piece in group)]
        if all((root / old).exists() for old in olds):
            texts = [(root / old).read_text(encoding="utf-8") for old in olds]
            names = [top_level_names(t) for t in texts]
            clash = any(a & b for i, a in enumerate(names) for b in names[i + 1:])
            modules = {module_of(o) for o in olds} | {module_of(into), *(module_of(p) for p in group)}
            text = merged_text(texts, modules)
            if clash or text.count("\n") > MERGE_LIMIT:
                print(f"move_wings: {', '.join(olds)} stay files of their own "
                      f"({'a name defined twice' if clash else f'{text.count(chr(10))} lines together'})")
                continue
            merge_now[into] = text
            merged |= set(group)
        elif (root / into).exists() and not any((root / p).exists() or (root / source_of[p]).exists()
                                                 for p in group):
            merged |= set(group)
    targets = {new for _, new in MOVES}
    unlisted = sorted(
        p.relative_to(root).as_posix() for folder in SORTED_FOLDERS for p in (root / folder).glob("*.py")
        if p.relative_to(root).as_posix() not in STAYS | {old for old, _ in MOVES} | targets
    )

    rewrite = rewriter_for(root, merged)
    changed = [p for p in files_to_rewrite(root) if rewrite(p.read_text(encoding="utf-8")) != p.read_text(
        encoding="utf-8")]
    if not pending and not changed:
        print("move_wings: already applied: every file is in place and no reference to the old layout is left")
        return 0
    print(f"move_wings: {len(pending)} files to move, {len(done)} in place already, "
          f"{len(changed)} files whose references to rewrite")
    if args.check:
        for old, new in pending:
            print(f"  git rm {old} (into {pieces[new]})" if new in merged else f"  git mv {old} {new}")
        for path in changed:
            print(f"  rewrite {path.relative_to(root)}")
    else:
        for package in PACKAGES:
            (root / package).mkdir(parents=True, exist_ok=True)
        for old, new in pending:
            if new in merged:
                remove(root, old)
            else:
                move(root, old, new)
        for into, text in merge_now.items():
            (root / into).write_text(text, encoding="utf-8")
        for package, doc in PACKAGES.items():
            init = root / package / "__init__.py"
            if not init.exists():
                init.write_text(f'"""{doc}"""\n', encoding="utf-8")
                git(root, "add", init.relative_to(root).as_posix())
        rewritten = []
        for path in files_to_rewrite(root):
            text = path.read_text(encoding="utf-8")
            new_text = rewrite(text)
            if new_text != text:
                path.write_text(new_text, encoding="utf-8")
                rewritten.append(path)
        print(f"move_wings: moved {len(pending) - len(merged & {n for _, n in pending})} files, merged "
              f"{len(merge_now)}, rewrote {len(rewritten)}")
        python = [p.relative_to(root).as_posix() for p in rewritten if p.suffix == ".py"]
        ruff = find_ruff()
        if python and ruff:
            subprocess.run([*ruff, "check", "--fix", "--select", "I", "--quiet", *python], cwd=root, check=False)
        elif python:
            print("move_wings: ruff not found: run `ruff check --fix --select I vlaudit tests benchmarks tools`")
    for old, new in missing:
        print(f"move_wings: neither {old} nor {new} exists: passed over")
    for path in unlisted:
        print(f"move_wings: {path} is not in the move table: left where it stands (place it by hand)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
