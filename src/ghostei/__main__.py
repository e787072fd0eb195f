"""``python -m ghostei``: the same as the ``ghostei`` command."""

from .cli import main

main()
