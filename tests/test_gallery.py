"""The manual's gallery is what ``docs/make_gallery.py`` makes now, picture for picture.

The script is run into a temporary folder and every committed picture in ``docs/gallery/`` is
compared with its fresh twin by decoded pixels (a different libwebp may encode the same
lossless pixels into other bytes); the generated page ``docs/gallery.md`` by its text.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "docs" / "gallery"
PAGE = ROOT / "docs" / "gallery.md"
MAX_BYTES = 3_000_000
MIN_PICTURES = 20
REGENERATE = "regenerate the gallery: python docs/make_gallery.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_gallery", ROOT / "docs" / "make_gallery.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The gallery as the script makes it now: its pictures' folder (the page beside it)."""
    out = tmp_path_factory.mktemp("made") / "gallery"
    written = _load_script().make_gallery(out)
    assert written[-1] == out.with_suffix(".md")  # the page, written last
    assert sorted(path.name for path in written[:-1]) == _pictures(out)
    return out


def _pixels(path: Path) -> tuple[tuple[int, int], bytes]:
    with Image.open(path) as image:
        return image.size, image.convert("RGBA").tobytes()


def _pictures(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("*.webp"))


def test_the_committed_pictures_are_what_the_script_makes(fresh: Path) -> None:
    made, committed = _pictures(fresh), _pictures(GALLERY)
    assert sorted(set(made) - set(committed)) == [], f"missing from docs/gallery/; {REGENERATE}"
    assert sorted(set(committed) - set(made)) == [], f"no longer made; {REGENERATE}"
    differ = [name for name in made if _pixels(fresh / name) != _pixels(GALLERY / name)]
    assert differ == [], f"pictures differ from the script's: {differ}; {REGENERATE}"


def test_the_committed_page_is_what_the_script_makes(fresh: Path) -> None:
    made = fresh.with_suffix(".md").read_text(encoding="utf-8")
    assert PAGE.read_text(encoding="utf-8") == made, f"docs/gallery.md is stale; {REGENERATE}"


def test_the_gallery_is_small_and_full() -> None:
    files = [path for path in GALLERY.iterdir() if path.is_file()]
    assert sum(path.stat().st_size for path in files) < MAX_BYTES
    assert len(_pictures(GALLERY)) >= MIN_PICTURES
    assert {path.suffix for path in files} == {".webp"}  # nothing else lives in the folder


def test_the_page_shows_every_picture_and_no_other() -> None:
    names = re.findall(r"!\[[^\]]*\]\(gallery/([^)]+)\)", PAGE.read_text(encoding="utf-8"))
    assert len(names) == len(set(names)), "a picture is shown twice"
    assert sorted(names) == _pictures(GALLERY)
