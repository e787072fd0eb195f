"""Fixtures for the GhostEI test suite.

The suite runs on two processes (pytest-xdist, ``-n 2 --dist loadfile`` in pyproject's
``addopts``): each test module goes whole to one process, so that a module-scoped fixture
(a finished run, a served phone, a Ray cluster) is built once. ``-n 0`` runs in this process.
"""

from __future__ import annotations

import pytest

from ghostei.sim.phone import SimPhone


@pytest.fixture
def phone() -> SimPhone:
    return SimPhone()


from .llm_server import scripted_llm  # noqa: E402, F401  (the scripted LLM server, for every test)
