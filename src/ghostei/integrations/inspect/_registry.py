"""What inspect_ai's entry point (group ``inspect_ai``) loads: the ``ghostei`` task."""

from .task import ghostei_task

__all__ = ["ghostei_task"]
