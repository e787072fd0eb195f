"""Where a run's episodes are placed: this process and worker processes beside it
(:mod:`.local`, ``ghostei run``), or a Ray cluster (:mod:`.ray`, the ``ray`` extra,
``ghostei run --executor ray``). Both run the episodes of :mod:`ghostei.runner` and append
their records to the run folder as each finishes.

Importing this package does not import Ray.
"""
