"""The simulated phone: a deterministic Android-like device rendered in pure Python."""
