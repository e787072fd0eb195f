"""GhostEI: environmental-injection attacks on mobile GUI agents, on a simulated phone or Android."""

__version__ = "0.1.0"
