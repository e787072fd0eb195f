"""Where a run's episodes are placed beside the local processes of :mod:`ghostei.runner`: Ray
(:mod:`.ray`, the ``ray`` extra, ``ghostei run --executor ray``).

Importing this package does not import Ray.
"""
