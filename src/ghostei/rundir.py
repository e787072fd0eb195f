"""The run directory: manifest, the run's cases, one record per finished episode, trajectories.

Records are appended one line at a time and fsynced, so a crash loses at most the episode in
flight; a trajectory folder is written under a temporary name and renamed when complete.
Reports are computed from this folder alone.

Every append-only JSONL file of a run (episodes, stored judgements) is read by ``read_jsonl``:
a line that does not validate is an error naming the file and line, never skipped, because a
skipped record silently changes N and a resume would then erase it for good. The one line a
reader tolerates is a *torn* last line (no terminating newline, unparseable): the trace of a
crash in the middle of an append, which always writes a whole line and its newline at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from .cases.schema import Case, ProbeLabel
from .verdict import Label, Verdict


class Truth(BaseModel):
    """An episode's true label in a labelled set (``ghostei truth build``), and where it came
    from: the trajectory that was walked and the definition that gives its behaviour that
    label (never a judge's verdict)."""

    label: ProbeLabel
    trajectory: str  # "oracle", "gullible", or the probe's name
    source: Literal["reference", "auto", "case"]  # a reference agent, a derived or written probe
    why: str  # the definition that gives the label
    suite: str  # "builtin" or "paper"
    row: int  # the case's id in its own suite


class EpisodeRecord(BaseModel):
    """The outcome of one (case, agent) episode."""

    case: int
    agent: str
    seed: int
    label: Label
    injection: str
    attack_fired: bool
    fired_step: int | None = None
    # Whether the attack reached the agent (on screen in an observation it was given; a
    # deceptive instruction always). None in records written before exposure was measured.
    exposed: bool | None = None
    exposed_step: int | None = None
    steps: int
    verdict: Verdict | None = None
    error: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)  # tokens and requests of the model
    cost: float | None = None  # USD, when the run has a price table for its model
    seconds: float = 0.0
    trajectory: str = ""
    # Where it ran: the Android device's serial (``serial@node`` on a Ray cluster); None on
    # the simulated phone.
    device: str | None = None
    # How many times the episode was run: a resumed error's replacement counts the attempts
    # before it, and its usage and cost include theirs (every request made is counted).
    attempts: int = 1
    # An external agent program's episode (``ghostei run --agent-cmd``): how it ended
    # (exited, max_steps, timeout, or the program's own finish/refuse/answer over MCP) and the
    # program's exit status when it exited by itself. None for the agents GhostEI runs.
    ended: str | None = None
    exit_code: int | None = None
    # A labelled set's episode (``ghostei truth build``): its true label and its source.
    truth: Truth | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.agent, self.case)


class RunDirError(ValueError):
    """A folder that is not a usable run directory."""


class RunDirBusy(RunDirError):
    """A run folder another process is writing (it holds the folder's writer lock)."""


class StorageError(RunDirError):
    """A run folder that could not be written (a full disk, a lost mount): what was being
    written, and why. Nothing half-written is left behind, and ``--resume`` finishes the run
    once the cause is gone."""


@contextlib.contextmanager
def _writing(path: Path, *scratch: Path) -> Iterator[None]:
    """Write ``path`` (through the ``scratch`` files or folders named): an OSError becomes a
    StorageError naming it, and the scratch is removed, so no half-written file stays."""
    try:
        yield
    except OSError as exc:
        for leftover in scratch:
            with contextlib.suppress(OSError):
                if leftover.is_dir():
                    shutil.rmtree(leftover)
                else:
                    leftover.unlink(missing_ok=True)
        raise StorageError(f"{exc.strerror or exc} while writing {path}") from None


M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class TornLine:
    """The unterminated, unparseable last line of a JSONL file: a crash while appending."""

    path: Path
    lineno: int  # 1-based
    offset: int  # where the line starts, in bytes: truncating there removes it
    text: str
    problem: str

    def describe(self, action: str = "left out") -> str:
        """A one-line warning, e.g. ``runs/x/episodes.jsonl:7: left out a torn last line ...``."""
        shown = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        return (
            f"{self.path}:{self.lineno}: {action} a torn last line (a crash while writing): "
            f"{shown!r}"
        )


@dataclass(frozen=True)
class JsonlContents(Generic[M]):
    """What ``read_jsonl`` found: every valid record in file order, and a torn last line."""

    records: list[M]
    torn: TornLine | None = None
    terminated: bool = True  # False: the file does not end with a newline (see drop_torn_line)
    lines: tuple[int, ...] = ()  # each record's 1-based line, in step with ``records``


def read_jsonl(path: Path, model: type[M]) -> JsonlContents[M]:
    """Every record of an append-only JSONL file, each line validated with ``model``.

    A missing file has no records; blank lines are skipped. A line that is not valid JSON or
    not a valid ``model`` raises RunDirError naming the file and the 1-based line, unless it is
    the last line and lacks its newline: that torn line is left out and returned in ``torn``.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return JsonlContents([])
    except OSError as exc:
        raise RunDirError(f"{path}: unreadable: {exc.strerror or exc}") from None
    lines = data.split(b"\n")  # the last item is what follows the final newline, often b""
    records: list[M] = []
    numbers: list[int] = []
    offset = 0
    for lineno, raw in enumerate(lines, 1):
        last = lineno == len(lines)
        start, offset = offset, offset + len(raw) + 1
        if not raw.strip():
            continue
        try:
            # Decoding per line: a torn write can split a multi-byte character at the end.
            records.append(model.model_validate_json(raw.decode("utf-8")))
            numbers.append(lineno)
        except (UnicodeDecodeError, ValidationError) as exc:
            problem = _problem(exc)
            if last:
                text = raw.decode("utf-8", errors="replace")
                torn = TornLine(path, lineno, start, text, problem)
                return JsonlContents(records, torn, terminated=False, lines=tuple(numbers))
            raise RunDirError(f"{path}:{lineno}: invalid record: {problem}") from None
    terminated = not data or data.endswith(b"\n")
    return JsonlContents(records, terminated=terminated, lines=tuple(numbers))


def drop_torn_line(path: Path, model: type[M]) -> TornLine | None:
    """Make an append-only JSONL file safe to append to again; returns the torn line dropped.

    A torn last line is cut off, and a last line that is whole but lacks its newline gets one:
    otherwise the next append would glue a record to it and make one corrupt line of two.
    Raises RunDirError, before writing anything, if a line is corrupt.
    """
    contents = read_jsonl(path, model)
    if contents.torn is not None:
        with path.open("r+b") as fh:
            fh.truncate(contents.torn.offset)
            os.fsync(fh.fileno())
    elif not contents.terminated:
        with path.open("ab") as fh:
            fh.write(b"\n")
            os.fsync(fh.fileno())
    return contents.torn


def _problem(exc: UnicodeDecodeError | ValidationError) -> str:
    """What is wrong with a line, briefly: the first error and how many more there are."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    text = f"{where}: {first['msg']}" if where else first["msg"]
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})"
    return text


class RunDir:
    """One run's folder."""

    MANIFEST = "manifest.json"
    # The writer's lock: held, by an advisory lock the kernel drops when its process ends,
    # for as long as one command writes the folder; it names that process.
    LOCK = ".writer.lock"
    CASES = "cases.jsonl"
    RECORDS = "episodes.jsonl"
    # The run's frame store: frames/<2 hex>/<name>.png and the dumps' <sha256>.xml.gz (.xml in
    # run folders written before dumps were gzipped).
    FRAMES = "frames"
    EPISODES = "episodes"  # episodes/<agent>/case-<id>/: each episode's trajectory and events

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # Torn last lines the reads of this object left out, by file: a report warns of them.
        self._torn: dict[Path, TornLine] = {}
        self._keys: set[tuple[str, int]] | None = None  # episodes in the records file

    # ----- the one writer ---------------------------------------------------------------------

    def hold(self) -> WriterLock:
        """Take the folder's writer lock (creating the folder), for a run, a resume or a judge;
        RunDirBusy naming the holder when another process has it. A lock whose process ended
        is free: the kernel released it with the process."""
        self.path.mkdir(parents=True, exist_ok=True)
        return WriterLock.take(self.path / self.LOCK)

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

    def cases_faced(self) -> list[Case]:
        """The cases as the run's episodes faced them: under the run's attack condition
        (``config.attack``: an adaptive variant reshapes the attack of each case it fits, a
        run without attacks asks the benign request). Judges and reports describe these."""
        from .attacks import STANDARD, case_under, fits

        config = self.manifest().get("config")
        attack = config.get("attack", STANDARD) if isinstance(config, dict) else STANDARD
        try:
            return [case_under(c, attack) if fits(c, attack) else c for c in self.cases()]
        except ValueError as exc:  # an attack condition this version does not know
            raise RunDirError(f"{self.path / self.MANIFEST}: config.attack: {exc}") from None

    def records(self) -> list[EpisodeRecord]:
        """Finished episodes, a later record of an episode superseding an earlier one.

        Raises RunDirError naming the line of a corrupt record; a torn last line (a crash
        mid-write) is left out and listed by ``torn_lines``.
        """
        records = {r.key: r for r in self.jsonl_records(self.path / self.RECORDS, EpisodeRecord)}
        return list(records.values())

    def jsonl_records(self, path: Path, model: type[M]) -> list[M]:
        """The records of one of this run's JSONL files (see ``read_jsonl``), remembering a
        torn last line for ``torn_lines``."""
        contents = read_jsonl(path, model)
        if contents.torn is not None:
            self._torn[path] = contents.torn
        else:
            self._torn.pop(path, None)
        return contents.records

    def torn_lines(self) -> list[TornLine]:
        """The torn last lines that the latest read of each file left out, to warn about."""
        return list(self._torn.values())

    # ----- writing ----------------------------------------------------------------------------

    def repair(self) -> list[str]:
        """Before resuming: keep only whole records, drop unfinished trajectories.

        Returns warnings for the caller to show: a torn last line is dropped for good. A
        corrupt record raises RunDirError before anything is written or deleted.
        """
        records = self.records()
        torn = self._torn.pop(self.path / self.RECORDS, None)
        _write_atomic(
            self.path / self.RECORDS, "".join(r.model_dump_json() + "\n" for r in records)
        )
        done = {self.trajectory_dir(r.agent, r.case) for r in records}
        root = self.path / self.EPISODES
        if root.exists():
            for folder in root.glob("*/*"):
                if folder.is_dir() and folder not in done:
                    shutil.rmtree(folder)
        return [] if torn is None else [torn.describe("dropped")]

    def append(self, record: EpisodeRecord) -> None:
        """Add one finished episode durably.

        The file keeps one line per episode: a record of an episode already there (a resumed
        error's replacement) takes the old line's place, in one atomic rewrite, and carries
        the old attempts' usage and cost, so neither a reader of the file nor the report
        counts an episode twice or loses a request.
        """
        if self._keys is None:
            self._keys = {r.key for r in self.records()}
        if record.key in self._keys:
            self._supersede(record)
            return
        line = (record.model_dump_json() + "\n").encode("utf-8")
        path = self.path / self.RECORDS
        with _writing(path):
            _append_whole(path, line)
        self._keys.add(record.key)

    def _supersede(self, record: EpisodeRecord) -> None:
        records = self.records()
        old = next(r for r in records if r.key == record.key)
        usage = dict(old.usage)
        for name, value in record.usage.items():
            usage[name] = usage.get(name, 0) + value
        costs = [c for c in (old.cost, record.cost) if c is not None]
        merged = record.model_copy(
            update={
                "usage": usage,
                "cost": sum(costs) if costs else None,
                "attempts": old.attempts + record.attempts,
            }
        )
        lines = [(merged if r.key == record.key else r).model_dump_json() + "\n" for r in records]
        _write_atomic(self.path / self.RECORDS, "".join(lines))

    def trajectory_dir(self, agent: str, case_id: int) -> Path:
        """Where an episode's trajectory lives."""
        return self.path / self.EPISODES / _safe(agent) / f"case-{case_id:04d}"

    def write_trajectory(self, folder: Path, files: Mapping[str, bytes]) -> None:
        """Put an episode's trajectory folder in place whole: written beside it under a name
        of this process's, then renamed over any older one, so a reader never sees half."""
        tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}-{threading.get_ident()}")
        with _writing(folder, tmp):
            if tmp.exists():
                shutil.rmtree(tmp)
            for name, data in files.items():
                path = tmp / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            if folder.exists():
                shutil.rmtree(folder)
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, folder)

    def adopt(self, files: Mapping[str, bytes]) -> None:
        """Take in what an episode run elsewhere wrote to its own run folder (a Ray worker's,
        see ``runner.run_episode_detached``), named relative to that folder: its frames and
        dumps join this run's store unless there already, its trajectory folder is put in
        place whole. Call it before appending the episode's record, which points at them.
        """
        trajectories: dict[Path, dict[str, bytes]] = {}
        for name, data in files.items():
            parts = PurePosixPath(name).parts
            if PurePosixPath(name).is_absolute() or ".." in parts or len(parts) < 3:
                raise RunDirError(f"{self.path}: an episode's file {name!r} is outside its place")
            if parts[0] == self.FRAMES:
                stem, dot, suffix = parts[-1].partition(".")
                self.store_frame(data, dot + suffix, stem)
            elif parts[0] == self.EPISODES and len(parts) >= 4:
                folder = self.path.joinpath(*parts[:3])
                trajectories.setdefault(folder, {})["/".join(parts[3:])] = data
            else:
                raise RunDirError(f"{self.path}: an episode's file {name!r} is outside its place")
        for folder, content in trajectories.items():
            self.write_trajectory(folder, content)

    def frame_path(self, name: str, suffix: str) -> Path:
        """Where the frame store keeps the file of that name."""
        return self.path / self.FRAMES / name[:2] / f"{name}{suffix}"

    def store_frame(self, data: bytes, suffix: str, name: str | None = None) -> Path:
        """Keep a frame (or its dump) once per run, under its name or the hash of its bytes.

        A simulated frame is named by its pixels (its PNG bytes may differ between encoders
        and processes); a device's frame and a dump by the SHA-256 of their bytes.

        Identical screens across steps, episodes and agents are one file. Workers (processes,
        and episode threads in them) may store the same frame at once: each writes a file of
        its own and renames it into place, so a reader never sees half a frame.
        """
        path = self.frame_path(name or hashlib.sha256(data).hexdigest(), suffix)
        if not path.exists():
            tmp = path.with_name(f"{path.name}.tmp{os.getpid()}-{threading.get_ident()}")
            with _writing(path, tmp):
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_bytes(data)
                os.replace(tmp, path)
        return path


class WriterLock:
    """An exclusive advisory lock on a file, held while the object is open (``release``).

    ``flock`` belongs to the open file, and the kernel drops it when the process that holds
    it ends, however it ends (a crash, SIGKILL): a dead writer never blocks the next. The
    file says who holds it, for the message another writer gets."""

    def __init__(self, path: Path, fh: Any) -> None:
        self.path = path
        self._fh = fh

    @classmethod
    def take(cls, path: Path) -> WriterLock:
        fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (held until release)
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise RunDirBusy(
                f"{path.parent} is being written by {holder}; wait for it to end, or use "
                "another --out"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"process {os.getpid()} ({' '.join(sys.argv[:3])})\n")
        fh.flush()
        return cls(path, fh)

    def release(self) -> None:
        """Let the next writer in (the file, emptied, stays: two runs' folders stay alike)."""
        if not self._fh.closed:
            self._fh.truncate(0)
            self._fh.close()


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def _append_whole(path: Path, data: bytes) -> None:
    """Append ``data`` whole or not at all. Unbuffered, so a failed write is not retried by a
    flush or a close: what a short write put down (a disk that filled mid-line) is cut back."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError:
            os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with _writing(path, tmp):
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
