"""``--help`` that reads whole in an 80-column terminal.

The groups in :mod:`vlaudit.commands._apps` render help as plain text (click's formatter, no rich panels): a
flag name is never cut and a description wraps under it at full width, and a help string with brackets
(``pip install 'vlaudit[ray]'``) shows as written, since nothing reads it as markup. :func:`polish` then
walks the command tree typer built and

* shows brackets escaped for rich markup (``\\[``) as plain brackets;
* names a positional argument by its name (``CYCLES``) and drops typer's type tag after it;
* names each option's value by its type (``TEXT``, ``INTEGER``, ``NUMBER``, ``PATH``, or the choices)
  instead of typer's ``<str>`` / ``<int>`` / ``<path>`` tags;
* says the default of an on/off flag (``[default: off]``) and of an option left unset (``[default: none]``),
  which click leaves unsaid, unless the help text already says what happens by default;
* says which paper an option's default comes from when it is a paper setting (:data:`PAPER_DEFAULTS`);
* wraps help text between words only, never after a hyphen inside a name ("patch-/shuffle");
* lists each subcommand with its whole first sentence, wrapped, where click cuts it at 45 characters with
  "..." (:func:`short_help`);
* lists the options of one backend or executor under their own heading (:data:`OPTION_PANELS`: ``hf:`` and
  ``vllm:`` models, the ``vllm:`` engine, ``openai:`` endpoints, Ray), after the options every run takes, in a
  command that has options of more than one of them (``vca score``).

Where "none" says too little, the option's help states what happens when it is not given ("default: every
image"); a test checks that every option of every command says its default one way or the other.
"""

from __future__ import annotations

import re
from typing import Any

from vlaudit import settings
from vlaudit.commands._stats_options import stats_flag

# (option, default) → where the paper states that setting: one (source, commands) entry, or several, each for
# the commands named (a path like "data factorial"; None: every command); the option's help then says so.
_Source = tuple[str, frozenset[str] | None]
PAPER_DEFAULTS: dict[tuple[str, Any], _Source | list[_Source]] = {
    ("--min-cycles", settings.MIN_CYCLES): ("the cycle paper's minimum, §D.5", None),
    (stats_flag("resamples"), settings.BOOTSTRAP_RESAMPLES): ("the VCA paper's bootstrap count, VCA §19 (the cycle paper states no bootstrap)", None),
    (stats_flag("seed"), settings.BOOTSTRAP_SEED): ("VCA §19", None),
    # one value, two settings: the factorial scenes' seed (§10) and the seed of its stem bootstrap (§19)
    (stats_flag("seed"), settings.FACTORIAL_SEED): [("VCA §10", frozenset({"data factorial"})),
                                                ("VCA §19", frozenset({"vca factorial"}))],
    (stats_flag("level"), settings.CONFIDENCE_LEVEL): ("two-sided 95% intervals, VCA §19", None),
    ("--stems", settings.FACTORIAL_STEMS): ("VCA §10", None),
    ("--min-gap", settings.EDIT_MIN_GAP): ("VCA §17", None),
    ("--max-iou", settings.EDIT_MAX_IOU): ("VCA §17", None),
    ("--pad", settings.EDIT_PAD_PX): ("VCA §17", None),
    ("--radius", settings.EDIT_INPAINT_RADIUS): ("VCA §17", None),
    ("--feather", settings.EDIT_FEATHER_PX): ("VCA §17", None),
    ("--repeat", settings.EDIT_REPEAT_FRACTION): ("VCA §17", None),
    ("--primary", settings.FILTER_PRIMARY_COVERAGE): ("VCA §16", None),
    (stats_flag("controls"), ",".join(settings.PRIMARY_CONTROLS)): ("the primary controls, VCA §3", None),
    ("--coverage", ",".join(f"{c:g}" for c in settings.FILTER_COVERAGES)): ("VCA §16", None),
    ("--hl-resamples", settings.HL_RESAMPLES): ("VCA §19", None),
}

#: the ``--help`` headings of the options that belong to one backend or executor (flags by their first name);
#: a command with options under two or more of them lists each group apart, the other options first
OPTION_PANELS: dict[str, tuple[str, ...]] = {
    "hf: and vllm: model options": ("--dtype", "--device", "--device-map", "--revision", "--min-pixels",
                                    "--max-pixels", "--trust-remote-code", "--batch-size", "--prefix-cache"),
    "vllm: engine options": ("--tensor-parallel-size", "--pipeline-parallel-size", "--gpu-memory-utilization",
                             "--max-model-len", "--block-size", "--max-num-seqs", "--enforce-eager"),
    "openai: endpoint options": ("--api-key-env", "--replica", "--concurrency", "--timeout", "--max-retries",
                                 "--backoff", "--top-logprobs", "--logprob-token-ids", "--served-dtype"),
    "Ray executor options": ("--executor", "--address", "--workers", "--gpus-per-worker", "--threads-per-worker"),
}
_PANEL_OF = {flag: panel for panel, flags in OPTION_PANELS.items() for flag in flags}
#: where a first sentence ends: a full stop (not of "e.g." or "i.e.") before a space or the end
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)\.(?=\s|$)")

_TYPE_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "path": "PATH", "file": "PATH",
               "directory": "FOLDER", "bool": "BOOLEAN"}


def value_name(label: str) -> str:
    """The metavar of an option's value from typer's type label (``<int range>`` → ``INTEGER``; a choice
    ``<a|b>`` lists its choices; ``<list[str]>`` of a repeatable option → ``TEXT``)."""
    label = label.strip("<>")
    if label.startswith("list[") and label.endswith("]"):
        label = label[5:-1]
    if "|" in label:
        return label
    base = label.split()[0] if label else "str"
    return _TYPE_NAMES.get(base, base.upper())


def _paper_source(param: Any, path: str) -> str | None:
    default = param.default
    if isinstance(default, bool) or not isinstance(default, (int, float, str)):
        return None
    for opt in param.opts:
        entries = PAPER_DEFAULTS.get((opt, default), [])
        for source, commands in entries if isinstance(entries, list) else [entries]:
            if commands is None or path in commands:
                return source
    return None


def _unescaped(text: str | None) -> str | None:
    r"""Plain help shows text as written: a bracket escaped for rich markup (``\[@SPLIT]``) loses its ``\``."""
    return None if text is None else text.replace("\\[", "[")


def _no_type_tag(ctx: Any) -> None:
    return None


def _is_option(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "option"


#: a character no help text holds, standing in for "-" while click wraps, so that it breaks only at spaces
_HYPHEN_HELD = "\u2011"


def _whole_words(formatter_class: type) -> type:
    """``formatter_class`` (click's, as typer vendors it) whose text and definition lists wrap at spaces only:
    click's wrapper breaks after any hyphen, which cuts ``patch-shuffle`` and ``--images`` across lines."""

    class WholeWordsFormatter(formatter_class):  # click's class, as typer vendors it
        _vlaudit_whole_words = True

        def _held(self, write: Any, *args: Any) -> None:
            start = len(self.buffer)
            write(*args)
            self.buffer[start:] = [part.replace(_HYPHEN_HELD, "-") for part in self.buffer[start:]]

        def write_text(self, text: str) -> None:
            self._held(super().write_text, text.replace("-", _HYPHEN_HELD))

        def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
            held = [(first, second.replace("-", _HYPHEN_HELD)) for first, second in rows]
            self._held(super().write_dl, held, col_max, col_spacing)

    return WholeWordsFormatter


def short_help(help_text: str | None) -> str | None:
    """A subcommand's line in its group's list: the first sentence of its help, whole (its first paragraph
    when that has no full stop), without the full stop."""
    if not help_text:
        return None
    paragraph = " ".join(help_text.strip().split("\n\n")[0].split())
    end = _SENTENCE_END.search(paragraph)
    return paragraph[:end.start()] if end else paragraph


def _panel(param: Any) -> str | None:
    return _PANEL_OF.get(param.opts[0]) if _is_option(param) and param.opts else None


def _format_options_in_panels(command: Any) -> None:
    """``command.format_options`` writing the arguments, the options every run takes, then one section per
    :data:`OPTION_PANELS` heading (the heading's order), in the command's order within each."""
    def format_options(ctx: Any, formatter: Any) -> None:
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": [], "Options": [],
                                                      **{name: [] for name in OPTION_PANELS}}
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                kind = "Options" if _is_option(param) else "Arguments"
                sections[getattr(param, "rich_help_panel", None) or kind].append(record)
        for name, rows in sections.items():
            if rows:
                with formatter.section(name):
                    formatter.write_dl(rows)

    command.format_options = format_options


def polish(command: Any, path: str = "") -> Any:
    """Apply the help conventions above to every option of ``command`` and its subcommands, in place
    (``path``: the command's words after ``vlaudit``, e.g. ``data factorial``)."""
    for name, sub in getattr(command, "commands", {}).items():
        polish(sub, f"{path} {name}".strip())
        if not sub.short_help:
            sub.short_help = short_help(_unescaped(sub.help))
    panels = {_panel(param) for param in getattr(command, "params", ())} - {None}
    if len(panels) > 1 and not getattr(command, "_vlaudit_panels", False):
        for param in command.params:
            param.rich_help_panel = _panel(param)
        _format_options_in_panels(command)
        command._vlaudit_panels = True
    context = type(command).context_class
    if not getattr(context.formatter_class, "_vlaudit_whole_words", False):
        formatter = _whole_words(context.formatter_class)
        command.context_class = type("WholeWordsContext", (context,), {"formatter_class": formatter})
    ctx = command.context_class(command)
    command.help = _unescaped(command.help)
    for param in getattr(command, "params", ()):
        if getattr(param, "_vlaudit_polished", False):
            continue
        param.help = _unescaped(param.help)
        if not _is_option(param):  # a positional argument: named by its name, as in the usage line
            if param.metavar is None:
                param.metavar = (param.name or "value").upper()
            param.display_type_rich = _no_type_tag  # the help row: "CYCLES  help", not "CYCLES <path>  help"
            param._vlaudit_polished = True
            continue
        param._vlaudit_polished = True
        help_text = (param.help or "").rstrip()
        if param.is_flag and not param.secondary_opts and not param.count:
            if param.default in (False, None) and not {"--help", "--version"} & set(param.opts):
                param.help = f"{help_text}  [default: off]".lstrip()
            continue
        if param.metavar is None:
            param.metavar = value_name(param.display_type(ctx))
        source = _paper_source(param, path)
        if source is not None:
            param.help = f"{help_text} Paper setting: {source}."
        elif param.default in (None, "", ()) and not param.required and "default" not in help_text.lower():
            param.help = f"{help_text}  [default: none]".lstrip()  # click shows no unset default
    return command
