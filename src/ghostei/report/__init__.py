"""Reports of a run folder and leaderboards across runs.

``tables`` builds a run's report (metrics with confidence intervals, breakdowns, the judge's
labels per episode) and renders it as rich tables, Markdown, CSV or JSON; ``compare`` ranks
agents across runs and compares two runs episode by episode; ``tradeoff`` sets defences side
by side across runs of different attack conditions (clean utility, utility under attack, VR,
VR under each adaptive variant), also as a standalone page with its plot; ``html`` renders
the self-contained HTML report with its trajectory viewer. Library code returns text or rich
renderables; the CLI prints or writes them.
"""

from .compare import RunEntry, leaderboard, load_run, paired_rows
from .tables import RunReport, Scored, build_report, report_json
from .tradeoff import Tradeoff, build_tradeoff

__all__ = [
    "RunEntry",
    "RunReport",
    "Scored",
    "Tradeoff",
    "build_report",
    "build_tradeoff",
    "leaderboard",
    "load_run",
    "paired_rows",
    "report_json",
]
