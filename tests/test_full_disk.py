"""A run folder that cannot be written (a full disk): the run exits 2 naming the file it was
writing and how to finish, leaves no half-written record, trajectory, frame or scratch file,
and ``--resume`` — once there is room — ends byte-identical to a run that was never cut.

The fault is real, not mocked: a child process's file-size limit (RLIMIT_FSIZE) makes the
kernel refuse the write that would grow a file past it, with a short write first, as a disk
that fills mid-write does; as root a 1 MB tmpfs is filled for real too."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ghostei.rundir import RunDir

CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]
RUN = ["run", "--cases", "1-12", "--agent", "oracle", "--agent", "gullible"]


def _ghostei(*args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def capped() -> None:
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an error to handle, not a death
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, preexec_fn=capped, timeout=600
    )


def _contents(folder: Path) -> dict[str, object]:
    """What a run folder holds, up to what may differ between two runs of the same episodes:
    when the manifest was written, how long each episode took, the order they finished in."""
    contents: dict[str, object] = {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != RunDir.LOCK
    }
    manifest = json.loads(contents.pop(RunDir.MANIFEST, b"{}"))
    manifest.pop("created", None)
    contents[RunDir.MANIFEST] = manifest
    records = contents.pop(RunDir.RECORDS, b"")
    assert isinstance(records, bytes)
    lines = [json.loads(line) for line in records.splitlines()]
    for line in lines:
        line.pop("seconds")
    contents[RunDir.RECORDS] = sorted(lines, key=lambda r: (r["agent"], r["case"]))
    return contents


def _assert_clean_stop(result: subprocess.CompletedProcess[str], out: Path) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "while writing" in result.stderr and str(out) in result.stderr
    leftovers = [p for p in out.rglob("*") if ".tmp" in p.name]
    assert leftovers == []  # no scratch file or folder stays
    records = out / RunDir.RECORDS
    if records.exists():
        text = records.read_text(encoding="utf-8")
        assert text == "" or text.endswith("\n")  # never half a record
        RunDir(out).records()  # every line that is there is a whole record


@pytest.fixture(scope="module")
def uncut(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("uncut") / "run"
    result = _ghostei(*RUN, "--out", str(out))
    assert result.returncode == 0, result.stderr
    return _contents(out)


@pytest.mark.slow
def test_a_full_disk_stops_the_run_cleanly_and_resume_finishes_it_whole(
    tmp_path: Path, uncut: dict[str, object]
) -> None:
    out = tmp_path / "run"
    limit = 118_000  # the cases (114 kB) fit; the largest frames (up to 135 kB) do not
    cut = _ghostei(*RUN, "--out", str(out), limit=limit)
    _assert_clean_stop(cut, out)
    assert f"ghostei run --resume --out {out}" in cut.stderr
    assert (out / RunDir.MANIFEST).exists()
    still_full = _ghostei("run", "--resume", "--out", str(out), limit=limit)
    _assert_clean_stop(still_full, out)
    resumed = _ghostei("run", "--resume", "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    assert _contents(out) == uncut


@pytest.mark.slow
def test_a_run_that_cannot_start_says_so_and_the_same_command_starts_it(
    tmp_path: Path, uncut: dict[str, object]
) -> None:
    out = tmp_path / "run"
    cut = _ghostei(*RUN, "--out", str(out), limit=3_000)  # not even the cases fit
    _assert_clean_stop(cut, out)
    assert "the run did not start" in cut.stderr and "cases.jsonl" in cut.stderr
    assert not (out / RunDir.MANIFEST).exists()
    again = _ghostei(*RUN, "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert _contents(out) == uncut


@contextlib.contextmanager
def _small_tmpfs(where: Path, size: str) -> Iterator[Callable[[str], None]]:
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("no tmpfs can be mounted here (needs root)")

    def grow(bigger: str) -> None:
        subprocess.run(["mount", "-o", f"remount,size={bigger}", str(where)], check=True)

    try:
        yield grow
    finally:
        subprocess.run(["umount", str(where)], check=False)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="needs root")
def test_a_filled_tmpfs_stops_the_run_and_resume_finishes_after_it_grows(
    tmp_path: Path, uncut: dict[str, object]
) -> None:
    with _small_tmpfs(tmp_path / "disk", "1m") as grow:
        out = tmp_path / "disk" / "run"
        cut = _ghostei(*RUN, "--out", str(out))
        _assert_clean_stop(cut, out)
        assert "No space left on device" in cut.stderr
        assert f"ghostei run --resume --out {out}" in cut.stderr
        grow("200m")
        resumed = _ghostei("run", "--resume", "--out", str(out))
        assert resumed.returncode == 0, resumed.stderr
        assert _contents(out) == uncut


def test_a_record_that_does_not_fit_is_not_written_at_all(tmp_path: Path) -> None:
    """records.jsonl takes a record whole or not at all: the kernel's short write of the line
    that does not fit is cut back, so the file ends at the last whole record."""
    from ghostei.rundir import StorageError

    from .helpers import cli

    source = tmp_path / "source"
    assert (
        cli(
            "run", "--cases", "1-2", "--agent", "oracle", "--no-frames", "--out", str(source)
        ).exit_code
        == 0
    )
    records = RunDir(source).records()
    first = len(records[0].model_dump_json()) + 1
    target = RunDir(tmp_path / "target")
    target.path.mkdir()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (first + 40, hard))  # room for 40 more bytes
    try:
        target.append(records[0])
        with pytest.raises(StorageError, match=r"while writing .*episodes\.jsonl"):
            target.append(records[1])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
    assert (target.path / RunDir.RECORDS).stat().st_size == first
    assert [r.key for r in RunDir(target.path).records()] == [records[0].key]
    target.append(records[1])  # room again: the record goes in whole
    assert [r.key for r in RunDir(target.path).records()] == [r.key for r in records]
