"""What connects GhostEI to other frameworks: the inspect_ai task (:mod:`.inspect`, the
``inspect`` extra) and the Gymnasium environment (:mod:`.gym_env`, the ``gym`` extra).

Importing this package imports neither, so neither extra is needed for it.
"""
