"""The paper's suite: the authors' released GhostEI.jsonl (MIT), shipped in the package.

``SOURCE.md`` beside it names the upstream repository, commit, path and sha256; ``LICENSE``
is the authors' licence. Tests, CI and the CLI find the file through :func:`dataset_path`,
never through a path outside the installed package.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DATASET = "GhostEI.jsonl"
# What ``ghostei cases import-upstream`` takes as the name of this copy.
PAPER = "paper"


def dataset_path() -> Path:
    """The packaged GhostEI.jsonl, as released upstream; its ``LICENSE`` and ``SOURCE.md``
    are beside it."""
    return Path(str(resources.files(__name__) / DATASET))
