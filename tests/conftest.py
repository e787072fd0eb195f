"""Fixtures for the GhostEI test suite."""

from __future__ import annotations

import pytest

from ghostei.sim.phone import SimPhone


@pytest.fixture
def phone() -> SimPhone:
    return SimPhone()


from .llm_server import scripted_llm  # noqa: E402, F401  (the scripted LLM server, for every test)
