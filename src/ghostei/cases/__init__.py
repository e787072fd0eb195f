"""Cases: the schema, its semantic checks, loading and selection, and the built-in dataset."""

from .lint import Problem, lint_case
from .loader import CaseError, CaseErrors, builtin_cases, load_cases, select_cases
from .paper_companion import paper_cases  # registers the paper's rows as --cases paper
from .schema import Case, Step, Trigger

__all__ = [
    "Case",
    "CaseError",
    "CaseErrors",
    "Problem",
    "Step",
    "Trigger",
    "builtin_cases",
    "lint_case",
    "load_cases",
    "paper_cases",
    "select_cases",
]
