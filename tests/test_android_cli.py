"""The issue's acceptance path, through the command line only: `ghostei device serve` with two
phones and a private adb server, then two `ghostei run --backend android` at once, one per
phone, give the steps of the direct simulator and its labels wherever a device can tell."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .adb_helpers import ADB, AdbServer, lines, private_adb_server, served_phones

CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]
# Every injection kind (overlay phishing: 4, 17; consent: 5; pop-up SMS: 8; static: 10;
# deceptive: 13).
CASES = {"first": "4,5,8", "second": "10,13,17"}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(ADB is None, reason="needs the adb binary of the adbutils wheel"),
]


def _labels(run: Path) -> dict[tuple[str, int], tuple[str, int]]:
    rows = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines() if x]
    return {(r["agent"], r["case"]): (r["label"], r["steps"]) for r in rows}


def _run(out: Path, cases: str, env: dict[str, str], *device: str) -> subprocess.Popen[str]:
    command = [
        *CLI,
        "run",
        *("--agent", "oracle", "--agent", "gullible", "--cases", cases),
        *("--out", str(out), "--no-frames", "--screen", "540x1200"),
        *device,
    ]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_two_android_runs_in_parallel_match_the_simulator(tmp_path: Path) -> None:
    with private_adb_server(tmp_path) as adb:
        _check(tmp_path, adb)


def _check(tmp_path: Path, adb: AdbServer) -> None:
    with served_phones(adb.env, adb.port, 2, "1-20") as [first, second]:
        serials = {"first": first, "second": second}
        listed = lines(adb.adb("devices").stdout)
        assert all(f"{s}\tdevice" in listed for s in serials.values())
        runs = {
            name: _run(
                tmp_path / f"android-{name}",
                CASES[name],
                adb.env,
                *("--backend", "android", "--serial", serials[name]),
                *("--adb-port", str(adb.port)),
            )
            for name in CASES
        }
        sims = {name: _run(tmp_path / f"sim-{name}", CASES[name], adb.env) for name in CASES}
        for proc in [*runs.values(), *sims.values()]:
            _, stderr = proc.communicate(timeout=600)
            assert proc.returncode == 0, stderr
    decided: set[str] = set()
    for name in CASES:
        android = _labels(tmp_path / f"android-{name}")
        direct = _labels(tmp_path / f"sim-{name}")
        assert android.keys() == direct.keys()
        for key, (label, steps) in android.items():
            # A decided label is the simulator's; what a stock device cannot report (a
            # pop-up SMS's drafts, a deceptive instruction's settings) is undetermined.
            assert steps == direct[key][1], key
            assert label in (direct[key][0], "undetermined"), key
        decided.update(label for label, _ in android.values())
        manifest = json.loads((tmp_path / f"android-{name}" / "manifest.json").read_text())
        assert manifest["config"]["backend"] == "android"
        assert manifest["config"]["serial"] == serials[name]
    assert decided >= {"TC", "FAS"}
