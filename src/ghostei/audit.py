"""A run folder's records held to its manifest and its files, before a report or a resume.

A record is what a report counts, so one that should not be there changes the numbers: a
record of an agent or a case the run does not have (a second writer's, an edit) is refused
naming its file and line; an episode recorded twice keeps its last record, as every reader
takes it, and is named; a record whose trajectory or frames are gone is named by a report and
run again by a resume (its episode is not done: nothing shows what it was).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .defences import agent_labels
from .rundir import EpisodeRecord, RunDir, RunDirError, read_jsonl


@dataclass
class Audit:
    """What the audit found beside the records a reader keeps."""

    duplicates: list[str] = field(default_factory=list)  # an episode recorded more than once
    missing: dict[tuple[str, int], str] = field(default_factory=dict)  # key -> what is gone

    def warnings(self) -> list[str]:
        """One sentence each, for a report's or a resume's warnings."""
        gone = [
            f"case {case}, agent {agent}: {what}" for (agent, case), what in self.missing.items()
        ]
        return [*self.duplicates, *gone]


def audit(run: RunDir) -> Audit:
    """Hold ``run``'s records to its manifest (its agents) and its cases, and look for each
    record's trajectory and frames. RunDirError naming ``file:line`` for a record of an agent
    or a case the run does not have."""
    path = run.path / run.RECORDS
    config = run.manifest().get("config")
    agents = set(agent_labels(config if isinstance(config, dict) else {}))
    cases = {c.id for c in run.cases()}
    contents = read_jsonl(path, EpisodeRecord)
    found = Audit()
    seen: dict[tuple[str, int], list[int]] = defaultdict(list)
    for record, line in zip(contents.records, contents.lines, strict=True):
        if agents and record.agent not in agents:
            raise RunDirError(
                f"{path}:{line}: a record of agent {record.agent!r}, which the run does not "
                f"have (its agents: {', '.join(sorted(agents))})"
            )
        if record.case not in cases:
            raise RunDirError(
                f"{path}:{line}: a record of case {record.case}, which the run does not have"
            )
        seen[record.key].append(line)
    for (agent, case), lines in seen.items():
        if len(lines) > 1:
            where = ", ".join(str(n) for n in lines)
            found.duplicates.append(
                f"case {case}, agent {agent}: recorded {len(lines)} times ({path.name} lines "
                f"{where}); the last is kept"
            )
    for record in run.records():
        gone = _gone(run.path, record)
        if gone:
            found.missing[record.key] = gone
    return found


def _gone(root: Path, record: EpisodeRecord) -> str:
    """What of a record's trajectory is missing, or ''."""
    if not record.trajectory:
        return ""  # an episode that wrote none (an error before it began)
    folder = root / record.trajectory
    doc = folder / "trajectory.json"
    if not doc.is_file():
        return f"its trajectory {record.trajectory} is missing"
    try:
        steps = json.loads(doc.read_text(encoding="utf-8")).get("frames") or []
    except (OSError, ValueError):
        return f"its trajectory {record.trajectory}/trajectory.json is unreadable"
    lost = [f for f in steps if isinstance(f, str) and not (folder / f).is_file()]
    if lost:
        return f"{len(lost)} of its frames are missing (the first: {Path(lost[0]).name})"
    return ""
