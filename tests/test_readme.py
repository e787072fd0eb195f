"""The README's and the manual's own-agent and own-defence examples work as printed.

tests/test_docs.py runs every example; these check what the examples do.
"""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from ghostei.cli import main
from ghostei.rundir import RunDir

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def readme_example(name: str, folder: Path) -> tuple[str, Path]:
    """The text of the page (the README or a docs page) whose Python example starts
    ``# NAME``, and that example saved as NAME."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        block = re.search(rf"```python\n(# {re.escape(name)}\n.*?)```", text, re.S)
        if block:
            source = folder / name
            source.write_text(block.group(1), encoding="utf-8")
            return text, source
    raise AssertionError(f"neither the README nor docs/ holds the {name} example")


def test_the_bring_your_own_agent_example_runs(tmp_path: Path) -> None:
    text, source = readme_example("my_agent.py", tmp_path)
    spec = f"{source}:FirstButtonAgent"
    assert "--agent my_agent.py:FirstButtonAgent" in text
    result = CliRunner().invoke(
        main,
        [
            *("run", "--agent", spec, "--cases", "1-2", "--out", str(tmp_path / "run")),
            *("--workers", "1", "--no-frames"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    records = RunDir(tmp_path / "run").records()
    assert len(records) == 2 and all(r.label != "error" for r in records)
    assert all(r.steps == 2 for r in records)  # a tap, then finish


def test_the_setup_commands_open_the_readme() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    commands = lines[lines.index("```bash") + 1 : lines.index("```bash") + 3]
    assert commands[0].endswith("pip install -e . && ghostei run")
    assert commands[1].endswith("pip install -e '.[test]' && python -m pytest -q")


def test_the_your_own_defence_example_runs_and_blocks(tmp_path: Path) -> None:
    text, source = readme_example("my_guard.py", tmp_path)
    assert "--defence my_guard.py:NoTapsOutside" in text
    result = CliRunner().invoke(
        main,
        [
            *("run", "--agent", "gullible", "--cases", "1", "--out", str(tmp_path / "run")),
            *("--defence", f"{source}:NoTapsOutside", "--workers", "1", "--no-frames"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    (record,) = RunDir(tmp_path / "run").records()
    assert record.agent == "gullible+no-taps-outside"
    events = (tmp_path / "run" / record.trajectory / "events.jsonl").read_text()
    assert '"action_blocked"' in events
