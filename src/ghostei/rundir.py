"""The run directory: manifest, the run's cases, one record per finished episode, trajectories.

Records are appended one line at a time and fsynced, so a crash loses at most the episode in
flight; a trajectory folder is written under a temporary name and renamed when complete.
Reports are computed from this folder alone.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from .cases.schema import Case
from .judge.base import Label, Verdict


class EpisodeRecord(BaseModel):
    """The outcome of one (case, agent) episode."""

    case: int
    agent: str
    seed: int
    label: Label
    injection: str
    attack_fired: bool
    fired_step: int | None = None
    steps: int
    verdict: Verdict | None = None
    error: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)  # tokens and requests of the model
    cost: float | None = None  # USD, when the run has a price table for its model
    seconds: float = 0.0
    trajectory: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return (self.agent, self.case)


class RunDirError(ValueError):
    """A folder that is not a usable run directory."""


class RunDir:
    """One run's folder."""

    MANIFEST = "manifest.json"
    CASES = "cases.jsonl"
    RECORDS = "episodes.jsonl"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    # ----- creation and loading -------------------------------------------------------------

    def create(self, manifest: dict[str, Any], cases: list[Case]) -> None:
        """Start a new run folder; refuses one that already holds a run."""
        if (self.path / self.MANIFEST).exists():
            raise RunDirError(f"{self.path} already holds a run; use --resume or another --out")
        self.path.mkdir(parents=True, exist_ok=True)
        lines = "".join(c.model_dump_json() + "\n" for c in cases)
        _write_atomic(self.path / self.CASES, lines)
        _write_atomic(self.path / self.MANIFEST, json.dumps(manifest, indent=2) + "\n")

    def manifest(self) -> dict[str, Any]:
        """The run's manifest."""
        file = self.path / self.MANIFEST
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RunDirError(f"{self.path} is not a run directory (no {self.MANIFEST})") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise RunDirError(f"{file}: unreadable manifest: {exc}") from None
        if not isinstance(data, dict):
            raise RunDirError(f"{file}: the manifest must be a JSON object")
        return data

    def cases(self) -> list[Case]:
        """The cases the run was started with."""
        file = self.path / self.CASES
        cases = []
        lineno = 0
        try:
            for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):  # noqa: B007 (read in the except)
                cases.append(Case.model_validate_json(line))
        except FileNotFoundError:
            raise RunDirError(f"{self.path} is not a run directory (no {self.CASES})") from None
        except ValidationError as exc:
            raise RunDirError(f"{file}:{lineno}: invalid case: {exc.errors()[0]['msg']}") from None
        return cases

    def records(self) -> list[EpisodeRecord]:
        """Finished episodes; a torn last line (a crash mid-write) is ignored."""
        file = self.path / self.RECORDS
        if not file.exists():
            return []
        records: dict[tuple[str, int], EpisodeRecord] = {}
        for line in file.read_text(encoding="utf-8").splitlines():
            try:
                record = EpisodeRecord.model_validate_json(line)
            except ValidationError:
                continue
            records[record.key] = record
        return list(records.values())

    # ----- writing ----------------------------------------------------------------------------

    def repair(self) -> None:
        """Before resuming: keep only whole records, drop unfinished trajectories."""
        records = self.records()
        _write_atomic(
            self.path / self.RECORDS, "".join(r.model_dump_json() + "\n" for r in records)
        )
        done = {self.trajectory_dir(r.agent, r.case) for r in records}
        root = self.path / "episodes"
        if root.exists():
            for folder in root.glob("*/*"):
                if folder.is_dir() and folder not in done:
                    shutil.rmtree(folder)

    def append(self, record: EpisodeRecord) -> None:
        """Add one finished episode durably."""
        line = record.model_dump_json() + "\n"
        with open(self.path / self.RECORDS, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def trajectory_dir(self, agent: str, case_id: int) -> Path:
        """Where an episode's trajectory lives."""
        return self.path / "episodes" / _safe(agent) / f"case-{case_id:04d}"


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
