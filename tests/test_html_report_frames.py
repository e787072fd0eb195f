"""The HTML report's frames: strips of screens embedded once, drawn back to the same pixels.

Runs are built by hand in tmp_path from synthetic screens stored the way a run stores them
(``encode_frame``: unfiltered rows deflated in bands, named by their pixels), so that each
test says exactly which frames the episodes show.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from ghostei.cases import builtin_cases
from ghostei.observation import encode_frame
from ghostei.report import html as report_html
from ghostei.report.html import render_html
from ghostei.rundir import EpisodeRecord, RunDir
from ghostei.runner import RunConfig, new_manifest

from .test_html_report import CHROMIUM, _atlases, _blobs, _frames, needs_chromium

SIZE = (1080, 2400)
WIDTH = 320  # the report's default frame width
HEIGHT = 711  # 2400 rows at 320 / 1080


def _screen(lines: list[str], size: tuple[int, int] = SIZE, accent: str = "#2457c5") -> Image.Image:
    """A phone screen: status bar, app bar, lines of text, navigation bar."""
    width, height = size
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, 80 * height // 2400), fill="#1d2330")
    draw.rectangle((0, 80 * height // 2400, width, 260 * height // 2400), fill=accent)
    font = ImageFont.load_default(size=max(10, 44 * width // 1080))
    for i, line in enumerate(lines):
        draw.text((60 * width // 1080, (320 + i * 120) * height // 2400), line, "#1d2330", font)
    draw.rectangle((0, height - 140 * height // 2400, width, height), fill="#eceff4")
    return image


def _reference(image: Image.Image, width: int = WIDTH) -> Image.Image:
    """What the report shows of a screen: scaled strip by strip, each strip on its own (a box
    reduce by the whole factor, then bilinear), 54 source rows making 16 at 320 from 1080."""
    w, h = image.size
    k = w // width
    rows = k * round(16 * w / width / k)
    out = Image.new("RGB", (width, round(h * width / w)))
    for y in range(0, h, rows):
        n = min(rows, h - y)
        top, bottom = round(y * width / w), round((y + n) * width / w)
        if bottom > top:
            strip = image.convert("RGB").crop((0, y, w, y + n)).reduce(k)
            out.paste(strip.resize((width, bottom - top), Image.Resampling.BILINEAR), (0, top))
    return out


def _psnr(a: Image.Image, b: Image.Image) -> float:
    assert a.size == b.size
    diff = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    mse = float((diff**2).mean())
    return float("inf") if mse == 0 else 10 * np.log10(255**2 / mse)


def _pillow_png(image: Image.Image) -> bytes:
    """The screen as Pillow writes a PNG: rows filtered (Sub, Up, Paeth...), not GhostEI's."""
    buf = io.BytesIO()
    image.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def _png(image: Image.Image, stream: Callable[[bytes, int], bytes]) -> bytes:
    """An 8-bit RGB PNG of unfiltered rows, deflated by ``stream(rows, stride)``."""
    rgb = image.convert("RGB")
    width, height = rgb.size
    rows = np.zeros((height, width * 3 + 1), np.uint8)
    rows[:, 1:] = np.asarray(rgb).reshape(height, width * 3)
    idat = _chunk(b"IDAT", stream(rows.tobytes(), width * 3 + 1))
    return b"\x89PNG\r\n\x1a\n" + _ihdr(width, height) + idat + _chunk(b"IEND", b"")


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = struct.pack(">I", zlib.crc32(kind + data))
    return struct.pack(">I", len(data)) + kind + data + crc


def _ihdr(width: int, height: int) -> bytes:
    return _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))  # 8-bit RGB


def _one_stream(rows: bytes, stride: int) -> bytes:
    """The rows in one zlib stream, as frames were stored before they were deflated in bands."""
    return zlib.compress(rows, 1)


def _stored_bands(rows: bytes, stride: int) -> bytes:
    """Bands of 64 rows, each stored (not compressed) and ended by a full flush: the rows'
    bytes appear as they are in the stream, sync markers in them included."""
    parts = [b"\x78\x01"]
    band = 64 * stride
    for start in range(0, len(rows), band):
        deflater = zlib.compressobj(0, zlib.DEFLATED, -15)
        parts.append(deflater.compress(rows[start : start + band]))
        parts.append(deflater.flush(zlib.Z_FULL_FLUSH))
    parts.append(b"\x03\x00" + struct.pack(">I", zlib.adler32(rows)))
    return b"".join(parts)


Frame = Image.Image | tuple[str, Any] | None


class _Run:
    """A run folder whose episodes show given frames.

    A frame is a screen (stored as a run stores it), None (not kept), or a tuple: ("file",
    bytes) stored under a made-up store name, ("missing", None) a store name with no file,
    ("beside", bytes) a file beside the trajectory as old run folders kept them.
    """

    def __init__(self, root: Path) -> None:
        self.case = next(c for c in builtin_cases() if c.id == 1)
        self.run = RunDir(root / "run")
        manifest = new_manifest(RunConfig(agents=("oracle", "gullible")), [self.case])
        self.run.create(manifest, [self.case])
        self.records: list[EpisodeRecord] = []
        self.names = 0

    def store(self, data: bytes, name: str | None = None) -> Path:
        if name is None:
            self.names += 1
            name = f"{self.names:032x}"
        return self.run.store_frame(data, ".png", name)

    def episode(self, agent: str, frames: list[Frame]) -> EpisodeRecord:
        folder = self.run.trajectory_dir(agent, self.case.id)
        folder.mkdir(parents=True)
        refs: list[str | None] = []
        for i, frame in enumerate(frames):
            if frame is None:
                refs.append(None)
                continue
            if isinstance(frame, Image.Image):
                png, name = encode_frame(frame)
                path = self.store(png, name)
            elif frame[0] == "file":
                path = self.store(frame[1])
            elif frame[0] == "missing":
                self.names += 1
                path = self.run.path / RunDir.FRAMES / "00" / f"00{self.names:030x}.png"
            else:
                path = folder / f"frames/step-{i:03d}.png"
                path.parent.mkdir(exist_ok=True)
                path.write_bytes(frame[1])
            refs.append(os.path.relpath(path, folder))
        steps = [
            {"step": i, "action": {"action_type": "wait"}, "events": []}
            for i in range(len(frames) - 1)
        ]
        doc = {"instruction": "look", "frames": refs, "steps": steps}
        folder.joinpath("trajectory.json").write_text(json.dumps(doc))
        record = EpisodeRecord(
            case=self.case.id, agent=agent, seed=0, label="TC", injection="none",
            attack_fired=False, steps=len(steps), trajectory=str(folder.relative_to(self.run.path)),
        )  # fmt: skip
        self.records.append(record)
        return record

    def html(self, **options: Any) -> str:
        return render_html(self.run, records=self.records, **options)


def _episode_frames(html: str) -> list[list[str | None]]:
    """Each episode's frame ids, in the order of the episode list."""
    blobs = _blobs(html)
    return [blobs[f"ep-data-{e['id']}"]["frames"] for e in blobs["episode-index"]]


A0 = _screen(["Inbox", "Hello Dana,", "the parcel is on its way."])
A1 = _screen(["Inbox", "Hello Dana,", "the parcel is on its way!"])  # one line differs
B0 = _screen(["Settings", "Wi-Fi", "Bluetooth", "Display", "Battery"], accent="#12b76a")


# ----- embedded once -------------------------------------------------------------------------


def test_a_frame_shared_by_two_episodes_is_embedded_once(tmp_path: Path) -> None:
    run = _Run(tmp_path)
    run.episode("oracle", [A0, A1])
    run.episode("gullible", [A0, B0])
    html = run.html()
    oracle, gullible = _episode_frames(html)
    assert oracle[0] == gullible[0]  # one frame id for the screen both saw
    assert len({*oracle, *gullible}) == 3
    table = _blobs(html)["frame-table"]
    assert sorted(table["frames"]) == sorted({*oracle, *gullible})


def test_rows_shared_by_frames_are_embedded_once(tmp_path: Path) -> None:
    alone = _Run(tmp_path / "alone")
    alone.episode("oracle", [A0])
    both = _Run(tmp_path / "both")
    both.episode("oracle", [A0, A1])
    strips = [len(_blobs(r.html())["frame-table"]["strips"]) for r in (alone, both)]
    # A1 differs from A0 in one line of text (under 60 rows): at most two strips of 54 rows.
    assert 0 < strips[1] - strips[0] <= 2
    # The other frame draws from the same strips but the changed ones.
    table = _blobs(both.html())["frame-table"]
    first, second = (numbers for _, _, *numbers in table["frames"].values())
    assert len(set(second) - set(first)) == strips[1] - strips[0]


# ----- the same pixels -----------------------------------------------------------------------


def test_strips_draw_the_downscaled_frame(tmp_path: Path) -> None:
    run = _Run(tmp_path)
    run.episode("oracle", [A0, A1, B0])
    html = run.html(frame_format="png")  # lossless: the pixels themselves
    drawn = _frames(html)
    for fid, screen in zip(_episode_frames(html)[0], (A0, A1, B0), strict=True):
        assert fid is not None
        assert drawn[fid].size == (WIDTH, HEIGHT)
        assert drawn[fid].tobytes() == _reference(screen).tobytes()
        # Scaling strip by strip is scaling the frame, but at strip edges: 40 dB and more.
        whole = screen.reduce(3).resize((WIDTH, HEIGHT), Image.Resampling.BILINEAR)
        assert _psnr(drawn[fid], whole) > 40


def test_lossy_strips_stay_close_to_the_frame(tmp_path: Path) -> None:
    run = _Run(tmp_path)
    run.episode("oracle", [A0, B0])
    html = run.html()
    assert all(uri.startswith("data:image/webp;base64,") for uri in _atlases(html).values())
    drawn = _frames(html)
    for fid, screen in zip(_episode_frames(html)[0], (A0, B0), strict=True):
        assert fid is not None
        assert _psnr(drawn[fid], _reference(screen)) > 30


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(_pillow_png, id="pillow-filtered-rows"),
        pytest.param(lambda image: _png(image, _one_stream), id="one-deflate-stream"),
        pytest.param(lambda image: _png(image, _stored_bands), id="bands-with-sync-markers-inside"),
    ],
)
def test_every_png_draws_the_same_pixels(
    tmp_path: Path, encode: Callable[[Image.Image], bytes]
) -> None:
    # Frames GhostEI wrote earlier (one stream) and PNGs of other writers decode to the same
    # strips as the run's own frames; they share them.
    screen = A0.copy()
    # Pixels whose bytes are a full flush's marker (00 00 FF FF), so that stored bands hold it.
    ImageDraw.Draw(screen).rectangle((0, 1000, 1079, 1003), fill=(0, 0, 255))
    ImageDraw.Draw(screen).rectangle((0, 1004, 1079, 1007), fill=(255, 0, 0))
    ours = _Run(tmp_path / "ours")
    ours.episode("oracle", [screen])
    both = _Run(tmp_path / "both")
    both.episode("oracle", [screen, ("file", encode(screen))])
    html = both.html(frame_format="png")
    first, second = _episode_frames(html)[0]
    assert first is not None and second is not None
    drawn = _frames(html)
    assert drawn[first].tobytes() == drawn[second].tobytes() == _reference(screen).tobytes()
    strips = [
        len(_blobs(r.html(frame_format="png"))["frame-table"]["strips"]) for r in (ours, both)
    ]
    assert strips[0] == strips[1]


def test_a_sync_marker_inside_a_band_is_not_taken_for_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    screen = A0.copy()
    ImageDraw.Draw(screen).rectangle((0, 1000, 1079, 1001), fill=(0, 0, 255))
    ImageDraw.Draw(screen).rectangle((0, 1002, 1079, 1003), fill=(255, 0, 0))
    data = _png(screen, _stored_bands)
    stream = data[data.index(b"IDAT") + 4 :]
    assert stream.count(b"\x00\x00\xff\xff") > 2 * 2400 // 64  # markers inside bands too
    run = _Run(tmp_path)
    run.episode("oracle", [("file", data)])

    def whole(*args: Any) -> None:
        raise AssertionError("a banded frame is read band by band")

    monkeypatch.setattr(report_html._Strips, "_plain", whole)
    html = run.html(frame_format="png")
    (fid,) = _episode_frames(html)[0]
    assert fid is not None
    assert _frames(html)[fid].tobytes() == _reference(screen).tobytes()


def test_screens_of_other_sizes(tmp_path: Path) -> None:
    small = _screen(["Small"], size=(720, 1600))
    narrow = _screen(["Tiny"], size=(240, 400))  # narrower than the frame: not enlarged
    run = _Run(tmp_path)
    run.episode("oracle", [small, narrow])
    html = run.html(frame_format="png")
    drawn = _frames(html)
    first, second = _episode_frames(html)[0]
    assert first is not None and second is not None
    assert drawn[first].tobytes() == _reference(small).tobytes()
    assert drawn[second].size == (240, 400)
    assert drawn[second].tobytes() == narrow.tobytes()
    # The marker layer is drawn over the screen the episode shows, in its own pixels.
    episode = _blobs(html)[f"ep-data-{_blobs(html)['episode-index'][0]['id']}"]
    assert episode["screen"] == [720, 1600]


# ----- missing and foreign frames ------------------------------------------------------------


def test_missing_and_unreadable_frames_keep_their_place_as_null(tmp_path: Path) -> None:
    png, _ = encode_frame(B0)
    # A PNG claiming 20000 x 20000 pixels: Pillow calls it a decompression bomb.
    bomb = png[:8] + _ihdr(20000, 20000) + png[8 + len(_ihdr(1, 1)) :]
    unreadable: list[Frame] = [
        ("missing", None),
        ("file", b"not a png"),
        ("file", png[: len(png) // 2]),  # truncated
        ("file", bomb),
        None,  # not kept (--frames keyframes)
    ]
    run = _Run(tmp_path)
    run.episode("oracle", [A0, *unreadable, A1])
    frames = _episode_frames(run.html())[0]
    assert len(frames) == 7
    assert frames[1:6] == [None] * 5
    assert None not in (frames[0], frames[6])


def test_a_frame_whose_bytes_do_not_match_its_name_shows_its_bytes(tmp_path: Path) -> None:
    png, name = encode_frame(A0)
    run = _Run(tmp_path)
    # B0's bytes under A0's name (a store edited by hand, or a copy gone wrong).
    run.store(encode_frame(B0)[0], name)
    run.episode("oracle", [("file", png)])  # A0 itself, under another name
    record = run.records[0]
    folder = run.run.path / record.trajectory
    doc = json.loads(folder.joinpath("trajectory.json").read_text())
    doc["frames"].append(
        os.path.relpath(run.run.path / "frames" / name[:2] / f"{name}.png", folder)
    )
    doc["steps"].append({"step": 0, "action": {"action_type": "wait"}, "events": []})
    folder.joinpath("trajectory.json").write_text(json.dumps(doc))
    html = run.html(frame_format="png")
    first, second = _episode_frames(html)[0]
    assert first is not None and second is not None and first != second
    drawn = _frames(html)
    assert drawn[first].tobytes() == _reference(A0).tobytes()
    assert drawn[second].tobytes() == _reference(B0).tobytes()


def test_store_frames_are_known_by_their_names_others_by_their_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store names a frame by its content: reading it to hash it would be wasted time.
    run = _Run(tmp_path / "store")
    run.episode("oracle", [A0, A1])
    run.episode("gullible", [A0, B0])
    hashed: list[int] = []

    def sha256(data: bytes) -> Any:
        hashed.append(len(data))
        return hashlib.sha256(data)

    monkeypatch.setattr(report_html, "hashlib", SimpleNamespace(sha256=sha256))
    assert len(_blobs(run.html())["frame-table"]["frames"]) == 3
    assert hashed == []
    # Old run folders kept frames beside each trajectory: those are known by their bytes, and
    # the same screen in two episodes is still embedded once.
    old = _Run(tmp_path / "old")
    png = encode_frame(A0)[0]
    old.episode("oracle", [("beside", png), ("beside", encode_frame(B0)[0])])
    old.episode("gullible", [("beside", png)])
    html = old.html()
    oracle, gullible = _episode_frames(html)
    assert oracle[0] == gullible[0] and oracle[0] != oracle[1]
    assert len(hashed) == 3


def test_the_page_is_the_same_every_time(tmp_path: Path) -> None:
    run = _Run(tmp_path)
    run.episode("oracle", [A0, A1, B0])
    run.episode("gullible", [B0, A0])
    assert run.html() == run.html()


def test_packed_blocks_are_base64_of_deflated_json(tmp_path: Path) -> None:
    run = _Run(tmp_path)
    run.episode("oracle", [A0])
    html = run.html()
    found = report_html.re.findall(
        r'<script type="application/x-packed-json" id="([^"]+)">(.*?)</script>',
        html,
        report_html.re.S,
    )
    assert {eid for eid, _ in found} >= {"frame-table"}
    for _, text in found:
        json.loads(zlib.decompress(base64.b64decode(text, validate=True)))


# ----- in a real browser -------------------------------------------------------------------


@pytest.mark.browser
@needs_chromium
def test_the_viewer_draws_the_frames_the_page_holds(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    run = _Run(tmp_path)
    run.episode("oracle", [A0, A1, ("missing", None), B0])
    run.episode("gullible", [B0, A0])
    html = run.html(frame_format="png")
    drawn = _frames(html)
    file = tmp_path / "report.html"
    file.write_text(html, encoding="utf-8")
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(file.as_uri())
        for eid, frames in zip(("e0", "e1"), _episode_frames(html), strict=True):
            page.click(f"#episodes button[data-episode={eid}]")
            page.wait_for_selector(f'#episode[data-episode="{eid}"]')
            for pos, fid in enumerate(frames):
                page.locator("#step-slider").fill(str(pos))
                if fid is None:
                    page.wait_for_selector("#no-frame:not([hidden])")
                    assert page.inner_text("#no-frame") == "no frame recorded"
                    assert page.is_hidden("#frame-canvas")
                    continue
                page.wait_for_selector(f'#frame-canvas:not([hidden])[data-frame="{fid}"]')
                uri = page.evaluate("() => document.getElementById('frame-canvas').toDataURL()")
                with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as shown:
                    assert shown.convert("RGB").tobytes() == drawn[fid].tobytes()
        browser.close()
    assert not errors
