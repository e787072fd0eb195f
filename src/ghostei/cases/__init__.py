"""Cases: the schema, loading and selection, and the built-in dataset."""

from .loader import CaseError, builtin_cases, load_cases, select_cases
from .schema import Case, Step, Trigger

__all__ = ["Case", "CaseError", "Step", "Trigger", "builtin_cases", "load_cases", "select_cases"]
