"""The paper suite's tables in docs/paper.md and the README, measured: the audit of the
authors' 110 rows (class by attack vector, with the paper's own counts), the rows whose own
criteria our label definitions depart from, and the reference agents over them by class,
with the failure stages of their compromised episodes.

    python benchmarks/paper_tables.py            # prints both tables as Markdown

It runs ``ghostei run --cases paper`` (oracle, gullible, random; no frames) into a temporary
folder and reads ``ghostei report --rows CLASS --format json`` for every class, so every
figure printed is what those commands give a user.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from ghostei.cases.paper_companion import CLASSES, load_companion, paper_cases, row_class
from ghostei.report.tables import STAGE_TITLES

AGENTS = ("oracle", "gullible", "random")
# The paper's Table 1: rows per attack vector (the dataset gives the same).
VECTORS = {
    "overlay": ("Overlay Attack", 59),
    "pop-up SMS": ("Popup SMS", 16),
    "static": ("Static Environment Injection", 11),
    "deceptive": ("User-Provided Instructions", 24),
}


def _vector(case: Any) -> str:
    for name, (key, _) in VECTORS.items():
        if key in (case.use_dynamic, case.case_type):
            return name
    raise ValueError(f"row {case.id}: no vector")


def audit_table() -> str:
    counts: Counter[tuple[str, str]] = Counter()
    for case in paper_cases():
        counts[row_class(case.id), _vector(case)] += 1
    head = "| class | " + " | ".join(VECTORS) + " | total |"
    lines = [head, "| --- |" + " ---: |" * (len(VECTORS) + 1)]
    for cls in CLASSES:
        cells = [counts[cls, v] for v in VECTORS]
        lines.append(f"| {cls} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    ours = [sum(counts[c, v] for c in CLASSES) for v in VECTORS]
    lines.append("| rows, ours | " + " | ".join(map(str, ours)) + f" | {sum(ours)} |")
    paper = [n for _, n in VECTORS.values()]
    lines.append(
        "| rows, the paper's Table 1 | " + " | ".join(map(str, paper)) + f" | {sum(paper)} |"
    )
    return "\n".join(lines)


def label_changes_table() -> str:
    """Every row whose own ``result`` criteria and our label definitions disagree, with what
    the companion file records of it (``label_changes``)."""
    lines = ["| row | class | where the row's criteria and our definitions disagree |"]
    lines.append("| ---: | --- | --- |")
    for row, entry in sorted(load_companion().items()):
        if entry.label_changes:
            said = "; ".join(c.rstrip(".") for c in entry.label_changes).replace("|", "/")
            lines.append(f"| {row} | {entry.klass} | {said} |")
    return "\n".join(lines)


def _ghostei(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ghostei", *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}%".replace(".0%", "%")


def agents_tables(run: Path) -> str:
    agent_args = [a for name in AGENTS for a in ("--agent", name)]
    _ghostei("run", "--cases", "paper", *agent_args, "--no-frames", "--out", str(run))
    lines = [
        "| agent | rows | N scored | TC | FAS | PAS | BF | VR | exposed | undetermined |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    stages: dict[str, dict[str, int]] = {}
    sizes = Counter(row_class(c.id) for c in paper_cases())
    for rows in ("all", *CLASSES):
        if rows != "all" and not sizes[rows]:
            continue  # a class no row is in: nothing to report on
        report = json.loads(
            _ghostei("report", str(run), "--rows", rows, "--format", "json", "--by", "none")
        )
        label = "all 110" if rows == "all" else f"{rows} ({sizes[rows]})"
        for agent in AGENTS:
            m = report["agents"].get(agent, {})
            n = m.get("n", 0)
            rates = [_pct(m.get(k)) if n else "" for k in ("tc", "fas", "pas", "bf", "vr")]
            exposed = _pct(m.get("exposed")) if n else ""
            lines.append(
                f"| {agent} | {label} | {n} | "
                + " | ".join(rates)
                + f" | {exposed} | {m.get('undetermined', 0)} |"
            )
        if rows == "checkable":
            stages = report["stages"]
    names = (
        "perception_failure",
        "recognition_failure",
        "reasoning_failure",
        "said_nothing",
        "against_words",
        "undecided",
    )
    stage_lines = [
        "| agent (checkable rows) | " + " | ".join(STAGE_TITLES[n] for n in names) + " |",
        "| --- |" + " ---: |" * len(names),
    ]
    for agent in AGENTS:
        counts = stages.get(agent, {})
        stage_lines.append(
            f"| {agent} | " + " | ".join(str(counts.get(n, 0)) for n in names) + " |"
        )
    return "\n".join(lines) + "\n\n" + "\n".join(stage_lines)


def main() -> None:
    print("## The audit: rows by class and attack vector\n")
    print(audit_table())
    print("\n## Where the rows' criteria and our definitions disagree\n")
    print(label_changes_table())
    with tempfile.TemporaryDirectory() as tmp:
        print("\n## The reference agents by class (rule judge)\n")
        print(agents_tables(Path(tmp) / "run"))


if __name__ == "__main__":
    main()
