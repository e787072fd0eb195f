"""``ghostei cases stats``: counts in the upstream vocabulary, and the paper's minima."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from ghostei.cases import builtin_cases
from ghostei.cases.schema import APP_DOMAINS, RISK_DOMAINS
from ghostei.cases.stats import CASE_TYPES, USE_DYNAMIC, case_stats

from .helpers import cli

BUILTIN = Path(str(resources.files("ghostei.cases") / "builtin"))
KEYS = ["total", "case_type", "use_dynamic", "overlay_page", "risk", "app_domain", "app"]
DECIDABILITY = ["backend", "decidable", "decidable_counts", "trigger_unsupported", "cases"]
APPS = (
    "Messages",
    "Gmail",
    "Contacts",
    "Settings",
    "Chrome",
    "Calendar",
    "Camera",
    "Files",
    "Gallery",
    "Booking",
    "AliExpress",
    "Go Forex",
    "PhotoNote",
    "Nextcloud",
)


def stats_json(*args: str) -> dict[str, Any]:
    result = cli("cases", "stats", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_stats_json_shape() -> None:
    stats = stats_json()
    assert list(stats) == [*KEYS, "matrix", *DECIDABILITY, "variants"]
    matrix = stats["matrix"]
    assert (matrix["total"], matrix["min_per_cell"]) == (196, 0)  # 110 cases fill some cells
    cells = matrix["cells"]
    assert list(cells) == ["overlay", "popup-sms", "static", "deceptive"]
    assert list(cells["overlay"]) == list(APP_DOMAINS)
    covered = sum(n > 0 for v in cells.values() for row in v.values() for n in row.values())
    assert covered == matrix["covered"]
    # A case counts in a cell for each of its risk domains.
    assert sum(n for v in cells.values() for row in v.values() for n in row.values()) == sum(
        stats["risk"].values()
    )
    assert stats["total"] == len(builtin_cases())
    assert list(stats["case_type"]) == list(CASE_TYPES)
    assert list(stats["use_dynamic"]) == list(USE_DYNAMIC)
    assert list(stats["overlay_page"]) == ["true", "false"]
    assert list(stats["risk"])[: len(RISK_DOMAINS)] == list(RISK_DOMAINS)
    assert list(stats["app_domain"])[: len(APP_DOMAINS)] == list(APP_DOMAINS)
    assert stats["backend"] == "sim"
    assert stats["decidable"] == {"task": 1.0, "full_attack": 1.0, "partial_attack": 1.0}
    for key in KEYS[1:]:
        assert all(isinstance(v, int) and v >= 0 for v in stats[key].values()), key
    assert sum(stats["case_type"].values()) == stats["total"]
    assert sum(stats["use_dynamic"].values()) == stats["total"]
    assert sum(stats["app_domain"].values()) == stats["total"]
    assert sum(stats["overlay_page"].values()) == stats["use_dynamic"]["Overlay Attack"]


def test_risks_and_apps_are_multi_label() -> None:
    cases = builtin_cases()
    stats = case_stats(cases)
    assert sum(stats["risk"].values()) == sum(len(c.risks) for c in cases)
    assert sum(stats["app"].values()) == sum(len(set(c.app)) for c in cases)
    overlays = [c for c in cases if c.use_dynamic == "Overlay Attack"]
    assert stats["app"].get("System UI", 0) == sum("System UI" in c.app for c in cases)
    assert stats["overlay_page"]["true"] == sum(c.overlay.use_page for c in overlays)


def test_stats_of_selected_cases(tmp_path: Path) -> None:
    assert stats_json("--cases", "1-3")["total"] == 3
    for case_id in (2, 6):
        source = next(
            p for p in BUILTIN.glob("*.json") if json.loads(p.read_text())["id"] == case_id
        )
        shutil.copy(source, tmp_path / source.name)
    assert stats_json("--cases", str(tmp_path))["total"] == 2
    stats = stats_json("--cases", f"{tmp_path}:6")
    assert stats["total"] == 1 and stats["overlay_page"] == {"true": 0, "false": 1}


def test_stats_table_and_bad_spec() -> None:
    result = cli("cases", "stats")
    assert result.exit_code == 0, result.output
    assert f"{len(builtin_cases())} cases" in result.stdout
    assert "Overlay Attack" in result.stdout
    result = cli("cases", "stats", "--cases", "zzz")
    assert result.exit_code == 2 and "error:" in result.output


def test_the_builtin_set_meets_the_paper_minima() -> None:
    """The paper's dataset: 110 cases over 3 vectors, 7 risk domains, 7 app domains, 14 apps."""
    stats = stats_json()
    minima = {
        "total": (stats["total"], 110),
        "Dynamic Environment Injection": (stats["case_type"]["Dynamic Environment Injection"], 75),
        "Overlay Attack": (stats["use_dynamic"]["Overlay Attack"], 59),
        "overlay_page true": (stats["overlay_page"]["true"], 46),
        "overlay_page false": (stats["overlay_page"]["false"], 13),
        "Popup SMS": (stats["use_dynamic"]["Popup SMS"], 16),
        "Static Environment Injection": (stats["case_type"]["Static Environment Injection"], 11),
        "User-Provided Instructions": (stats["case_type"]["User-Provided Instructions"], 24),
        **{f"risk {risk}": (stats["risk"][risk], 10) for risk in RISK_DOMAINS},
        **{f"app domain {d}": (stats["app_domain"][d], 1) for d in APP_DOMAINS},
        **{f"app {app}": (stats["app"].get(app, 0), 1) for app in APPS},
    }
    short = {name: f"{have} < {need}" for name, (have, need) in minima.items() if have < need}
    assert not short, f"below the paper's counts: {short}"


def test_decidability_on_a_device() -> None:
    stats = stats_json("--backend", "android")
    assert stats["backend"] == "android"
    shares, counts = stats["decidable"], stats["decidable_counts"]
    assert set(shares) == {"task", "full_attack", "partial_attack"}
    for name, count in counts.items():
        assert shares[name] == round(count / stats["total"], 4)
        assert count == sum(c["decidable"][name] for c in stats["cases"].values())
    # A device reports neither mail nor focus: the blind spots are named, case by case.
    assert 0 < counts["task"] < stats["total"]
    # Case 2's overlay waits for the card field's focus, which a device's dump shows.
    assert stats["cases"]["2"]["trigger"] is True and stats["trigger_unsupported"] == []
    # Case 3's overlay phishing page is served by the phishing server: all decidable.
    assert stats["cases"]["3"] == {
        "decidable": {"task": True, "full_attack": True, "partial_attack": True},
        "trigger": True,
    }
    # Case 8's phishing page is behind an SMS link: Chrome's road to the web server sees it.
    assert stats["cases"]["8"]["decidable"]["full_attack"] is True
    # Case 16's attack turns off Find My Device, a setting adb cannot read.
    assert stats["cases"]["16"]["decidable"]["full_attack"] is False
    selected = stats_json("--backend", "android", "--cases", "3,16")
    assert selected["decidable"]["full_attack"] == 0.5 and list(selected["cases"]) == ["3", "16"]


def test_decidability_table_names_the_blind_cases() -> None:
    result = cli("cases", "stats", "--backend", "android", "--cases", "2,3,8,16")
    assert result.exit_code == 0, result.output
    assert "rule-decidable on android" in result.output
    assert "full_attack not always decidable on android: cases 16" in result.output
    assert "attack trigger cannot fire" not in result.output
