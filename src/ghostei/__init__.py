"""GhostEI: environmental-injection attacks on mobile GUI agents, simulated or on Android."""

__version__ = "0.1.0"
