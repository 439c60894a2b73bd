"""``python -m vlaudit`` runs the command line."""

from vlaudit.cli import run

run()
