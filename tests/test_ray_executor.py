"""``ghostei run --executor ray``: on a real local Ray cluster (``ray start --head`` with two
CPUs, started here), the built-in cases give the records and trajectory files of the local
workers; two served phones are two device actors; a worker killed mid-run loses only its
episode, which ``--resume`` runs again, so nothing is lost and nothing counted twice."""

from __future__ import annotations

import filecmp
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ghostei.cases import select_cases
from ghostei.rundir import RunDir, RunDirError
from ghostei.runner import RunConfig, lost_record

from .adb_helpers import ADB, AdbServer, served_phones
from .ray_helpers import RayHead, ray_head

ray = pytest.importorskip("ray", reason="the ray extra: pip install -e '.[test,ray]'")

CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]
ALL = len(select_cases(None))


@dataclass
class Cluster:
    head: RayHead
    adb: AdbServer | None

    @property
    def address(self) -> str:
        return self.head.address

    @property
    def env(self) -> dict[str, str]:
        return self.head.env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    # One HOME for the adb server and the cluster: the workers reach the served phones'
    # consoles with the adb keys kept there.
    home = tmp_path_factory.mktemp("home")
    adb = AdbServer(home) if ADB is not None else None
    if adb is not None:
        adb.start()
    try:
        env = adb.env if adb is not None else {**os.environ, "HOME": str(home)}
        with ray_head(cpus=2, env=env) as head:
            yield Cluster(head, adb)
    finally:
        if adb is not None:
            adb.kill()


def _cli(env: dict[str, str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _records(run: Path) -> dict[tuple[str, int], dict[str, object]]:
    lines = (run / "episodes.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines if line]
    by_key = {(r["agent"], r["case"]): r for r in rows}
    assert len(by_key) == len(rows), "an episode recorded twice"
    return by_key


def _same_files(left: Path, right: Path) -> None:
    """Every file under the two folders, byte for byte."""
    files = sorted(p.relative_to(left) for p in left.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(right) for p in right.rglob("*") if p.is_file())
    match, mismatch, errors = filecmp.cmpfiles(left, right, [str(f) for f in files], shallow=False)
    assert not mismatch and not errors, (mismatch, errors)
    assert len(match) == len(files)


def _without_timing(record: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in record.items() if k != "seconds"}


@pytest.mark.slow
def test_ray_runs_the_built_in_cases_as_the_local_workers_do(
    cluster: Cluster, tmp_path: Path
) -> None:
    agents = ("--agent", "oracle", "--agent", "gullible")
    # Every case through the head's address; with frames, a few through Ray Client.
    for name, frames, cases, address in (
        ("all", "--no-frames", f"1-{ALL}", cluster.address),
        ("frames", "", "1-6", cluster.head.client),
    ):
        on_ray, local = tmp_path / f"ray-{name}", tmp_path / f"local-{name}"
        flags = (*agents, "--cases", cases, *((frames,) if frames else ()))
        ray_args = ("--executor", "ray", "--ray-address", address)
        done = _cli(cluster.env, "run", *flags, *ray_args, "--out", str(on_ray))
        assert done.returncode == 0, done.stderr
        done = _cli(cluster.env, "run", *flags, "--workers", "2", "--out", str(local))
        assert done.returncode == 0, done.stderr
        ray_records, local_records = _records(on_ray), _records(local)
        assert len(ray_records) == 2 * len(select_cases(cases))
        assert {k: _without_timing(r) for k, r in ray_records.items()} == {
            k: _without_timing(r) for k, r in local_records.items()
        }
        _same_files(on_ray / "episodes", local / "episodes")
        if frames == "":
            assert any((on_ray / "frames").rglob("*.png"))
            _same_files(on_ray / "frames", local / "frames")
    labels = {k: r["label"] for k, r in _records(tmp_path / "ray-all").items()}
    assert {labels[("oracle", c)] for c in range(1, ALL + 1)} == {"TC"}
    assert {labels[("gullible", c)] for c in range(1, ALL + 1)} == {"FAS"}


def _episode_workers(token: str) -> list[int]:
    """The cluster's worker processes running an episode now (not those of another cluster
    on this machine: they would not carry this test's token)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            title = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if title.startswith(b"ray::run_episode_detached") and token.encode() in environ:
            found.append(int(proc.name))
    return found


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_its_episode_and_resume_runs_it(
    cluster: Cluster, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    command = [
        *CLI,
        "run",
        *("--agent", "oracle", "--agent", "gullible", "--no-frames", "--out", str(out)),
        *("--executor", "ray", "--ray-address", cluster.address),
    ]
    run = subprocess.Popen(
        command, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and run.poll() is None:
        busy = _episode_workers(cluster.head.token)
        if busy and (out / "episodes.jsonl").exists():
            os.kill(busy[0], signal.SIGKILL)
            killed = busy[0]
        time.sleep(0.05)
    _, stderr = run.communicate(timeout=600)
    assert killed is not None, "no worker was seen running an episode"
    assert run.returncode == 1, stderr  # an error episode: the run says so
    first = _records(out)
    lost = [r for r in first.values() if r["label"] == "error"]
    assert lost and all("lost on the Ray cluster" in str(r["error"]) for r in lost)
    assert len(first) == 2 * ALL
    assert "lost on the Ray cluster: WorkerCrashedError" in stderr

    done = _cli(cluster.env, "run", "--resume", "--out", str(out), *command[-4:])
    assert done.returncode == 0, done.stderr
    after = _records(out)  # one line per episode: no episode lost or counted twice
    assert after.keys() == first.keys()
    assert {r["label"] for k, r in after.items() if k[0] == "oracle"} == {"TC"}
    assert {r["label"] for k, r in after.items() if k[0] == "gullible"} == {"FAS"}
    for r in lost:
        again = after[(str(r["agent"]), int(str(r["case"])))]
        assert again["attempts"] == 2 and again["error"] is None
        assert (out / str(again["trajectory"]) / "trajectory.json").is_file()
    assert not list((out / "episodes").glob("*/*.tmp*"))


@pytest.mark.slow
@pytest.mark.skipif(ADB is None, reason="needs the adb binary of the adbutils wheel")
def test_two_served_phones_are_two_device_actors(cluster: Cluster, tmp_path: Path) -> None:
    assert cluster.adb is not None
    cases = "4,5,8,10,13,17"  # every injection kind
    flags = ("--agent", "oracle", "--agent", "gullible", "--cases", cases, "--no-frames")
    with served_phones(cluster.env, cluster.adb.port, 2, cases) as serials:
        android = _cli(
            cluster.env,
            "run",
            *flags,
            *("--screen", "540x1200", "--out", str(tmp_path / "android")),
            *("--backend", "android", "--adb-port", str(cluster.adb.port)),
            *("--executor", "ray", "--ray-address", cluster.address),
        )
        assert android.returncode == 0, android.stderr
    assert "devices (2)" in android.stderr
    sim = _cli(cluster.env, "run", *flags, "--screen", "540x1200", "--out", str(tmp_path / "sim"))
    assert sim.returncode == 0, sim.stderr
    on_devices, direct = _records(tmp_path / "android"), _records(tmp_path / "sim")
    assert on_devices.keys() == direct.keys()
    used = {str(r["device"]).split("@")[0] for r in on_devices.values()}
    assert used == set(serials)
    for key, record in on_devices.items():
        assert record["steps"] == direct[key]["steps"], key
        assert record["label"] in (direct[key]["label"], "undetermined"), key
    assert {r["label"] for r in on_devices.values()} >= {"TC", "FAS"}
    manifest = json.loads((tmp_path / "android" / "manifest.json").read_text())
    assert manifest["config"]["backend"] == "android" and manifest["config"]["serial"] is None


# ----- without a cluster -------------------------------------------------------------------


def test_device_specs_name_a_serial_and_perhaps_its_node() -> None:
    from ghostei.executors.ray import DeviceSpec

    assert DeviceSpec.parse("emulator-5554") == DeviceSpec("emulator-5554")
    spec = DeviceSpec.parse("emulator-5556@10.0.0.7")
    assert spec.matches("emulator-5556", "10.0.0.7")
    assert not spec.matches("emulator-5556", "10.0.0.8")
    assert DeviceSpec("emulator-5554").matches("emulator-5554", "10.0.0.8")
    for bad in ("", "@10.0.0.7", "emulator-5554@"):
        with pytest.raises(ValueError, match="SERIAL@NODE_IP"):
            DeviceSpec.parse(bad)


def test_a_lost_episode_is_an_error_that_resume_runs(tmp_path: Path) -> None:
    case = select_cases("13")[0]  # a deceptive instruction
    record = lost_record(case, "oracle", RunConfig(defences=("warn-popups",)), "node gone")
    assert (record.label, record.agent, record.steps) == ("error", "oracle+warn-popups", 0)
    assert record.injection == "deceptive_instruction" and record.error == "node gone"
    clean = lost_record(case, "oracle", RunConfig(attack="none"), "node gone")
    assert clean.injection == "none"


def test_adopting_files_from_outside_their_places_is_refused(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    for name in ("../x/y/z", "/etc/passwd/a/b", "episodes/a", "notes/a/b.txt"):
        with pytest.raises(RunDirError, match="outside its place"):
            run.adopt({name: b"x"})
    run.adopt(
        {
            "frames/ab/abcdef.png": b"png",
            "frames/cd/cdef.xml.gz": b"xml",
            "episodes/oracle/case-0001/trajectory.json": b"{}",
        }
    )
    assert run.frame_path("abcdef", ".png").read_bytes() == b"png"
    assert run.frame_path("cdef", ".xml.gz").read_bytes() == b"xml"
    assert (run.trajectory_dir("oracle", 1) / "trajectory.json").read_bytes() == b"{}"


def test_ray_options_without_the_ray_executor_are_refused(tmp_path: Path) -> None:
    env = {**os.environ}
    done = _cli(env, "run", "--cases", "1", "--ray-address", "auto", "--out", str(tmp_path / "a"))
    assert done.returncode == 2 and "--ray-address needs --executor ray" in done.stderr
    done = _cli(
        env,
        *("run", "--backend", "android", "--serial", "emulator-5554"),
        *("--serial", "emulator-5556", "--out", str(tmp_path / "b")),
    )
    assert done.returncode == 2 and "several need --executor ray" in done.stderr
    done = _cli(env, "run", "--executor", "ray", "--serial", "x@", "--out", str(tmp_path / "c"))
    assert done.returncode == 2 and "SERIAL@NODE_IP" in done.stderr
    assert not any(tmp_path.iterdir())
