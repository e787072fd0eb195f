"""The manual: every page in the site's nav, a strict build, and every example run as printed.

An example is a fenced ``bash``, ``sh`` or ``python`` block of ``README.md`` or ``docs/*.md``.
A page's examples run in order, in one fresh folder that holds the page's ``# NAME.py``
examples as files, unless the line before a fence is ``<!-- not run: REASON -->`` with a
reason of ``NOT_RUN`` (docs/contributing.md, "Writing the manual").
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
NOT_RUN = {"install", "synopsis", "model", "device", "server", "cluster", "slow"}

_FENCE = re.compile(r"^( *)```(bash|sh|python)\n(.*?)^\1```$", re.S | re.M)
_MARK = re.compile(r"<!-- not run: (\S+) -->")


@dataclass(frozen=True)
class Example:
    """One fenced example of a page: its language, its text and why it is not run, if so."""

    page: Path
    line: int
    language: str
    source: str
    not_run: str | None


def examples(page: Path) -> list[Example]:
    """The page's fenced shell and Python examples, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for fence in _FENCE.finditer(text):
        indent, language, body = fence.groups()
        last_line = text[: fence.start()].rstrip("\n").rpartition("\n")[2]
        mark = _MARK.fullmatch(last_line.strip())
        source = "".join(line.removeprefix(indent) + "\n" for line in body.splitlines())
        found.append(
            Example(
                page=page,
                line=text.count("\n", 0, fence.start()) + 1,
                language=language,
                source=source,
                not_run=mark.group(1) if mark else None,
            )
        )
    return found


def _page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_every_page_is_in_the_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*(\S+\.md)\s*$", config, re.M))
    assert listed == {p.name for p in DOCS.glob("*.md")}


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_skipped_example_says_why(page: Path) -> None:
    for example in examples(page):
        assert example.not_run in NOT_RUN | {None}, (
            f"{_page_id(page)}:{example.line}: unknown reason {example.not_run!r}"
        )


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_the_examples_run_as_printed(page: Path, tmp_path: Path) -> None:
    runnable = [e for e in examples(page) if e.not_run is None]
    if not runnable:
        pytest.skip(f"{_page_id(page)} has no example that runs here")
    for example in examples(page):
        name = re.match(r"# (\w+\.py)\n", example.source)
        if example.language == "python" and name:
            (tmp_path / name.group(1)).write_text(example.source, encoding="utf-8")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for example in runnable:
        if example.language == "python":
            command = [sys.executable, "-c", example.source]
        else:
            command = ["bash", "-euo", "pipefail", "-c", example.source]
        done = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        where = f"{_page_id(page)}:{example.line}"
        assert done.returncode == 0, f"{where} exited {done.returncode}\n{done.stdout}{done.stderr}"


def test_the_readme_links_resolve() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README.md links to a missing {target}"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "index.html").exists()


def _contract_layers() -> list[str]:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [
        c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers"
    ]
    return [" ".join(layer.split()) for layer in layers]


def _picture_layers() -> list[str]:
    """The modules of each layer the architecture page's Mermaid diagram draws, top to bottom.

    A layer is a node whose label starts with its modules in ``<b>…</b>`` (``<br>`` may break
    the list); the order is the arrows', followed from the one node no arrow points to.
    """
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    (diagram,) = re.findall(r"^```mermaid\n(.*?)^```$", text, re.S | re.M)
    nodes = {
        node: " ".join(modules.replace("<br>", " ").split())
        for node, modules in re.findall(r'^\s*(\w+)\["<b>(.*?)</b>', diagram, re.M)
    }
    below = dict(re.findall(r"^\s*(\w+)\s*-->\s*(\w+)\s*$", diagram, re.M))
    assert set(below) | set(below.values()) <= set(nodes), "an arrow to or from no layer"
    tops = set(nodes) - set(below.values())
    assert len(tops) == 1, f"the arrows make no one chain of layers: it starts at {sorted(tops)}"
    (top,) = tops
    layers: list[str] = []
    node: str | None = top
    while node is not None and len(layers) <= len(nodes):
        layers.append(nodes[node])
        node = below.get(node)
    return layers


def test_the_architecture_picture_draws_the_layer_contract() -> None:
    # The contract in pyproject.toml is the one written source; the page draws its layers,
    # top to bottom, each node naming the layer's modules as the contract does.
    assert _picture_layers() == _contract_layers()
