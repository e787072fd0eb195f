"""Judges turn an episode into labels; the rule judge reads a case's declarative checks."""

from ..verdict import LABELS, Verdict, label_of
from .rules import RuleJudge

__all__ = ["LABELS", "RuleJudge", "Verdict", "label_of"]
