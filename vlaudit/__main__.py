"""``python -m vlaudit`` runs the command line."""

from vlaudit.cli import main

main()
