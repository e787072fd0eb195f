"""The HTML report: one self-contained file with the metrics, the plots and a trajectory viewer.

The page makes no network request: CSS, JavaScript and plots are inline, frames are data URIs.
The episode list is the only JSON parsed when the page opens. Every episode's steps sit in
their own data block, deflated (base64), that the viewer inflates only when the episode is
selected. Frames are downscaled (``frame_width``) and cut into strips of about 16 rows; each
distinct strip of the run is embedded once, in an atlas image, and the viewer draws a frame
from its strips on a canvas, decoding an atlas only when an episode that shows it is opened.
Screens share most of their rows from one step to the next and between episodes (bars, the
keyboard, the home screen, a case's first screens), so the default run's frames take 4 MB
(15 MB as one WebP each), and its report is written in about 7 s on two cores (was 30-38).

Texts from cases, models and attackers are untrusted: the template autoescapes them, the
episode index escapes ``<``, ``>`` and ``&`` so nothing in it can close the script element,
packed blocks and atlases are base64 (no ``<`` at all), and the viewer's script inserts texts
with ``textContent`` only.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import itertools
import json
import os
import re
import struct
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import urlsplit, urlunsplit

import jinja2
import xxhash
from isal import isal_zlib
from markupsafe import Markup
from PIL import Image, features

from .. import __version__
from ..attacks import NO_ATTACK
from ..cases.schema import RISK_DOMAINS, Case
from ..defences import agent_labels
from ..judge.store import judged_records
from ..rundir import EpisodeRecord, RunDir
from ..verdict import LABELS
from . import plots
from .tables import (
    CLEAN_RATES,
    CLEAN_UTILITY,
    SHOWN_RATES,
    SHOWN_TITLES,
    STAGE_COLUMNS,
    STAGE_TITLES,
    STAGES_NOTE,
    STAGES_TITLE,
    Scored,
    attack_of,
    build_report,
    compromised_then_error,
    describe_attack,
    interval,
    shows_stages,
)

FrameFormat = Literal["webp", "jpeg", "png"]
# The breakdowns of the report, in the order shown: (``metrics.breakdown``'s key, heading).
BREAKDOWNS = (
    ("case_type", "Attack vector (case type)"),
    ("use_dynamic", "Injection mechanism"),
    ("risk", "Risk domain"),
    ("app_domain", "Application domain"),
    ("app", "App"),
)
# The summary's rates with their intervals: the paper's, then VR exposed and exposed.
RATES = SHOWN_RATES
# Only these fields of the model config reach the page: never a key, nor extra request fields.
MODEL_FIELDS = ("provider", "model", "base_url", "temperature", "seed", "max_tokens")
# Screen text stays legible at these qualities at 270-360 px wide; higher ones add a third.
# WebP's method 2 encodes the atlases in half the time of method 4 (1.3 s of CPU, not 2.8):
# 65 at method 2 is both sharper (PSNR 36.7 dB, not 36.6) and faster than 60 at method 4, for
# 7 % more bytes.
WEBP_QUALITY = 65
WEBP_METHOD = 2
JPEG_QUALITY = 75


def render_html(
    run: RunDir,
    *,
    judge: str = "rule",
    records: list[EpisodeRecord] | None = None,
    frame_width: int = 320,
    frame_format: FrameFormat = "webp",
) -> str:
    """The whole report of ``run`` as one self-contained HTML document.

    ``records`` default to the run's records as ``judge`` labels them. Frames are scaled to
    ``frame_width`` pixels wide and embedded as ``frame_format`` data URIs.
    """
    if frame_width < 32:
        raise ValueError(f"frame_width must be at least 32 pixels, not {frame_width}")
    if records is None:
        records = judged_records(run, judge)
    manifest = run.manifest()
    cases = {c.id: c for c in run.cases_faced()}  # the attack as the agent saw it
    agents = _agent_order(manifest, records)
    records = sorted(records, key=lambda r: (agents.index(r.agent), r.case))
    fmt = frame_format if frame_format != "webp" or features.check("webp") else "jpeg"
    loaded = [_load_trajectory(run, r) for r in records]
    unique: dict[str, Path] = {}  # each distinct frame once, in order of first use
    for _, frame_refs in loaded:
        for key, path in frame_refs:
            if key is not None:
                unique.setdefault(key, path)
    strips = _Strips(frame_width)
    workers = min(8, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        packer = _Packer(strips, lambda group: pool.submit(_atlas, group, fmt))
        # This thread only lays the frames out while they decode: Python running here would
        # hold the GIL that the workers take back after every C call, and slow them down.
        for key, got in _in_order(pool, strips.frame, unique.items(), 4 * workers):
            packer.add(key, got)
        packer.flush()
        # The last atlases encode while the numbers and plots are computed.
        report = build_report(records, cases, agent_order=agents, by=[b for b, _ in BREAKDOWNS])
        scored, breakdowns = report.agents, report.breakdowns
        plot_risk = _risk_plot(breakdowns["risk"], agents)
        plot_tc_vr = _tc_vr_plot(scored, agents)
        frames = packer.finish()
    episodes = _episodes(records, cases, [(d, [k for k, _ in f]) for d, f in loaded], frames)
    # Actions a defence blocked, per agent label: from the steps the viewer shows.
    blocked = dict.fromkeys(agents, 0)
    for e in episodes:
        blocked[e.meta["agent"]] += e.meta["blocked"]
    config = manifest.get("config", {})
    clean = attack_of(config) == NO_ATTACK
    rates = CLEAN_RATES if clean else RATES

    template = environment().get_template("report.html.j2")
    return template.render(
        title=run.path.resolve().name,
        header=_header(run, manifest, agents, judge, records),
        agents=agents,
        colours={a: plots.agent_colour(i) for i, a in enumerate(agents)},
        summary=[
            {**_summary_row(a, scored[a], records, rates), "blocked": blocked[a]} for a in agents
        ],
        rate_names=[_rate_title(name, clean) for name in rates],
        # The blocked actions' column: when the run had defences, or a record says one blocked.
        show_blocked=bool(config.get("defences")) or any(blocked.values()),
        exposure_unmeasured=not all(scored[a].metrics.exposure_measured for a in agents),
        compromised_then_error=[
            (r.agent, r.case, r.label, r.error) for r in records if compromised_then_error(r)
        ],
        frame_width=frame_width,
        show_usage=any(r.usage for r in records),
        breakdowns=[
            (heading, _breakdown_rows(breakdowns[by], agents, by)) for by, heading in BREAKDOWNS
        ],
        stages_title=STAGES_TITLE,
        stages_note=STAGES_NOTE,
        stage_titles=[STAGE_TITLES[c] for c in STAGE_COLUMNS],
        stages=[
            (a, [(report.stages or {}).get(a, {}).get(c, 0) for c in STAGE_COLUMNS]) for a in agents
        ]
        if shows_stages(report)
        else [],
        plot_risk=Markup(plot_risk),
        plot_tc_vr=Markup(plot_tc_vr),
        labels=[*LABELS, "undetermined", "judge_error", "error"],
        index=_json_script([e.meta for e in episodes]),
        episodes=[(e.meta["id"], _packed(e.data)) for e in episodes],
        frame_table=_packed(frames.table),
        atlases=frames.atlases,
        css=Markup(asset("report.css")),
        js=Markup(asset("report.js")),
    )


# ----- the header and the metrics ---------------------------------------------------------


def _agent_order(manifest: Mapping[str, Any], records: Iterable[EpisodeRecord]) -> list[str]:
    configured = agent_labels(manifest.get("config", {}))
    seen = {r.agent for r in records}
    return [a for a in configured if a in seen] + sorted(seen - set(configured))


def _header(
    run: RunDir,
    manifest: Mapping[str, Any],
    agents: list[str],
    judge: str,
    records: list[EpisodeRecord],
) -> dict[str, Any]:
    config = manifest.get("config", {})
    model = config.get("model") or {}
    return {
        "run": run.path.resolve().name,
        "created": manifest.get("created", "unknown"),
        "version": manifest.get("ghostei_version", "unknown"),
        "report_version": __version__,
        "attack": describe_attack(attack_of(config)),
        "agents": agents,
        "judge": judge,
        "cases": len(manifest.get("cases", [])),
        "episodes": len(records),
        "model": [(k, _public(k, model[k])) for k in MODEL_FIELDS if model.get(k) is not None],
        "settings": [
            (k, config[k])
            for k in ("seed", "max_steps", "reflection", "thinking", "backend")
            if k in config
        ],
    }


def _public(field: str, value: Any) -> str:
    # A base URL may carry credentials (user:password@host) or a key in its query string.
    if field != "base_url":
        return str(value)
    parts = urlsplit(str(value))
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _rate_title(name: str, clean: bool) -> str:
    return CLEAN_UTILITY if clean and name == "tc" else SHOWN_TITLES[name]


def _summary_row(
    agent: str, s: Scored, records: list[EpisodeRecord], rates: Sequence[str] = RATES
) -> dict[str, Any]:
    mine = [r for r in records if r.agent == agent]
    costs = [r.cost for r in mine if r.cost is not None]
    m = s.metrics
    return {
        "agent": agent,
        "m": m,
        "rates": [(SHOWN_TITLES[name], getattr(m, name), s.ci.get(name)) for name in rates],
        # injected and goal reached, after the counts' columns begin: rates with intervals too
        "more_rates": [(getattr(m, name), s.ci.get(name)) for name in ("fired", "goal_reached")],
        "prompt_tokens": sum(r.usage.get("prompt_tokens", 0) for r in mine),
        "completion_tokens": sum(r.usage.get("completion_tokens", 0) for r in mine),
        "requests": sum(r.usage.get("requests", 0) for r in mine),
        "cost": round(sum(costs), 4) if costs else None,
    }


def _breakdown_rows(
    groups: Mapping[str, Mapping[str, Scored]], agents: list[str], by: str
) -> list[tuple[str, list[Scored | None]]]:
    names = list(groups)
    if by == "risk":
        names.sort(key=lambda g: RISK_DOMAINS.index(g) if g in RISK_DOMAINS else len(RISK_DOMAINS))
    return [(g, [groups[g].get(a) for a in agents]) for g in names]


def _risk_plot(groups: Mapping[str, Mapping[str, Scored]], agents: list[str]) -> str:
    rows = _breakdown_rows(groups, agents, "risk")
    vr = {g: {a: s.metrics.vr for a, s in zip(agents, ss, strict=True) if s} for g, ss in rows}
    return plots.vr_by_group_svg(vr, agents) if vr else ""


def _tc_vr_plot(scored: Mapping[str, Scored], agents: list[str]) -> str:
    points = {
        a: (scored[a].metrics.tc, scored[a].metrics.vr) for a in agents if scored[a].metrics.n
    }
    cis = {a: (scored[a].ci.get("tc"), scored[a].ci.get("vr")) for a in points}
    return plots.tc_vs_vr_svg(points, cis) if points else ""


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f} %"


# ----- episodes ------------------------------------------------------------------------------


@dataclass
class _Episode:
    meta: dict[str, Any]  # what the episode list shows, always parsed
    data: dict[str, Any]  # frames and steps, unpacked when the episode is selected


def _episodes(
    records: Sequence[EpisodeRecord],
    cases: Mapping[int, Case],
    loaded: Sequence[tuple[dict[str, Any] | None, list[str | None]]],
    frames: _Frames,
) -> list[_Episode]:
    out = []
    for i, (r, (doc, keys)) in enumerate(zip(records, loaded, strict=True)):
        # A missing or unreadable frame keeps its place (null): later frames stay at their step.
        refs = [frames.ids.get(key) if key else None for key in keys]
        sizes = [frames.screens[key] for key in keys if key in frames.screens]
        screen = sizes[0] if sizes else (1080, 2400)
        out.append(_episode(f"e{i}", r, cases.get(r.case), doc, refs, screen))
    return out


def _load_trajectory(
    run: RunDir, r: EpisodeRecord
) -> tuple[dict[str, Any] | None, list[tuple[str | None, Path]]]:
    """The episode's trajectory.json with its events, and its frames as (key, path).

    A frame of the run's store is named by its content (a hash of its pixels, or of its bytes):
    the name is its key, and the file is not read here (reading and hashing the default run's
    4,340 frame references took half a second). A frame elsewhere (old run folders kept them
    beside the trajectory) is hashed; one that cannot be read has no key, and a frame not kept
    (null) none either: they stay null frames at their steps.
    """
    if not r.trajectory:
        return None, []
    folder = run.path / r.trajectory
    try:
        doc: dict[str, Any] = json.loads((folder / "trajectory.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, []
    events: dict[int, dict[str, Any]] = {}
    try:
        for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                event = json.loads(line)
                events[int(event["seq"])] = event
    except (OSError, ValueError, KeyError):
        pass
    doc["_events"] = events
    store = os.path.normpath(run.path / RunDir.FRAMES)
    frames: list[tuple[str | None, Path]] = []
    for rel in doc.get("frames", []):
        if not isinstance(rel, str):  # a frame not kept (--frames keyframes)
            frames.append((None, folder))
            continue
        path = Path(os.path.normpath(folder / rel))
        in_store = str(path.parent.parent) == store and path.parent.name == path.name[:2]
        if in_store and _STORE_NAME.fullmatch(path.name):
            frames.append((path.stem, path))
            continue
        try:
            frames.append((hashlib.sha256(path.read_bytes()).hexdigest(), path))
        except OSError:
            frames.append((None, path))
    return doc, frames


def _episode(
    eid: str,
    r: EpisodeRecord,
    case: Case | None,
    doc: dict[str, Any] | None,
    frames: list[str | None],
    screen: tuple[int, int],
) -> _Episode:
    verdict = r.verdict.model_dump(mode="json") if r.verdict is not None else None
    meta = {
        "id": eid,
        "agent": r.agent,
        "case": r.case,
        "title": case.case if case else f"case {r.case}",
        "label": r.label,
        "instruction": doc.get("instruction", "") if doc else (case.prompt if case else ""),
        "case_type": case.case_type if case else "",
        "use_dynamic": case.use_dynamic if case else "",
        "risks": list(case.potential_risks) if case else [],
        "app_domain": case.app_domain if case else "",
        "apps": list(case.app) if case else [],
        "attack": case.extra if case else {},
        "injection": r.injection,
        "attack_fired": r.attack_fired,  # injected on the device
        "fired_step": r.fired_step,
        "exposed": r.exposed,  # reached the agent; None: not measured (an older run)
        "exposed_step": r.exposed_step,
        "compromised_then_error": compromised_then_error(r),
        "steps": r.steps,
        "seconds": r.seconds,
        "usage": r.usage,
        "error": r.error,
        "verdict": verdict,
        "trajectory": r.trajectory,
    }
    steps = _steps(doc) if doc else []
    meta["blocked"] = sum(step["blocked"] is not None for step in steps)  # actions stopped
    data: dict[str, Any] = {
        "frames": frames,  # ids of the frame elements, in order: one per step, and the last
        "screen": list(screen),
        "steps": steps,
        "reset_events": _reset_events(doc) if doc else [],
    }
    return _Episode(meta, data)


def _steps(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    events: Mapping[int, dict[str, Any]] = doc["_events"]
    steps = []
    for step in doc.get("steps", []):
        action = step.get("action") or {}
        evs = [events[s] for s in step.get("events", []) if s in events]
        steps.append(
            {
                "step": step.get("step"),
                "raw_output": step.get("raw_output"),
                "summary": step.get("summary"),
                "action": action,
                "foreground": step.get("foreground"),
                "events": evs,
                "mark": _mark(action, evs),
                "blocked": _blocked(step, evs),
            }
        )
    return steps


def _blocked(step: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """What a defence blocked at this step: the step's record (defence, reason, the action),
    else its ``action_blocked`` event's; None when nothing was blocked."""
    record = step.get("blocked")
    if not isinstance(record, Mapping):
        record = next((e.get("data") for e in events if e.get("kind") == "action_blocked"), None)
    if not isinstance(record, Mapping):
        return None
    action = record.get("action")
    return {
        "defence": str(record.get("defence") or "a defence"),
        "reason": str(record.get("reason") or ""),
        "action": action if isinstance(action, Mapping) else {},
        "mark": _mark(action, []) if isinstance(action, Mapping) else None,
    }


def _reset_events(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    # What happened before the agent's first step (seeds, an attack that fires at reset).
    events: Mapping[int, dict[str, Any]] = doc["_events"]
    in_steps = {s for step in doc.get("steps", []) for s in step.get("events", [])}
    first = min(in_steps, default=len(events))
    return [e for seq, e in sorted(events.items()) if seq < first]


def _mark(action: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Where to mark the frame: the action's point, or where the device tapped.

    An index-based action names an element, not a point; the device's tap event records the
    element's centre it tapped, so the marker is where the tap really went.
    """
    x, y = action.get("x"), action.get("y")
    if action.get("action_type") in ("swipe", "drag") and action.get("x2") is not None:
        return {"kind": "swipe", "x": x, "y": y, "x2": action.get("x2"), "y2": action.get("y2")}
    if x is not None and y is not None:
        return {"kind": "tap", "x": x, "y": y}
    for event in events:
        data = event.get("data") or {}
        if event.get("kind") == "tap" and "x" in data and "y" in data:
            return {"kind": "tap", "x": data["x"], "y": data["y"]}
    return None


# ----- frames --------------------------------------------------------------------------------

# Why strips, and the figures behind each choice, measured on the default run (330 episodes,
# 1480 distinct 1080x2400 frames; 320 px wide; two cores):
# - Size. Whole frames as WebP were 14.8 MB of data URIs. Of the 66,600 strips of 16 rows the
#   frames cut into, 9,126 are distinct (14 %); in atlases of 1,024 rows they take 4.0 MB.
#   One WebP per strip took 5.7 MB (a header each, no context to learn from); lossless WebP
#   3-4 times lossy (downscaled text is anti-aliased, not flat), PNG more, JPEG q75 twice WebP;
#   80x16 tiles saved 10 % over strips for four times the references. Atlases of 4,096 rows
#   save 1 % but make the viewer decode 2.4 times the rows when an episode opens. The steps
#   and events are deflated too: 2.4 MB of JSON, 0.5 MB packed.
# - Decoding was most of the time: Pillow's PNG decoder takes 9-10 ms a frame. A run's frames
#   are deflated in bands of rows, each ended by a full flush (``png.encode_frame``), so a band
#   inflates on its own and a band seen before (the same compressed bytes) is not inflated
#   again: its rows' hashes are kept. That is 3.9 s of CPU for the run where inflating every
#   frame whole took 7 s (ISA-L, 2.2 ms a frame). Frames from before bands are inflated whole;
#   other PNGs (filtered rows) go through Pillow. Rows are hashed with xxh3 (50 GB/s; SHA-256
#   would take 4.5 ms a frame), and only strips never seen are scaled.
# - A strip is scaled on its own, so that its pixels depend on its rows alone (the page is
#   the same whatever thread met a strip first): a box reduce by the whole factor, then
#   bilinear for the rest (1080 -> 360 -> 320). As legible as Lanczos, 10 % smaller once
#   encoded (less ringing); 47 dB from scaling the whole frame, the difference at strip edges.
# - Strips start at multiples of 16 rows in their atlas, WebP's and JPEG's block size, so no
#   block straddles two strips; a short strip's slot repeats its last row.
# - Threads: ISA-L, xxhash and most of Pillow release the GIL, but only while in C; a Python
#   thread running beside them makes each call wait for the GIL again (an xxh3 call measured
#   2.5 ms beside a busy thread, 3.4 us alone), so this thread waits while frames decode.
# A store frame's name: 32 hex digits (xxh3-128 of a simulated screen's size and pixels), or
# 64 (SHA-256 of a device's PNG).
_STORE_NAME = re.compile(r"[0-9a-f]{32}(?:[0-9a-f]{32})?\.png")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
STRIP_ROWS = 16  # rows of a strip once downscaled, about (exactly: 54 of 1080x2400 at 320)
SLOT_ROWS = 16  # a strip starts at a multiple of this in its atlas
ATLAS_ROWS = 1024  # the most rows of one atlas: the viewer decodes an atlas as a whole
_Decoded = tuple[tuple[int, int], list[bytes]] | None  # a frame's screen size and strip keys
_SYNC = b"\x00\x00\xff\xff"  # ends a full flush: an empty stored block's length and its complement
_FINAL_EMPTY_BLOCK = b"\x03\x00"  # a final fixed-Huffman block with no data
_BAND_TRIES = 8  # sync markers tried before a frame is inflated whole instead
# ISA-L's stubs declare its error an instance; it is an exception class.
_InflateError = cast("type[Exception]", isal_zlib.error)


@dataclass
class _Frames:
    """The run's frames as the page embeds them."""

    ids: dict[str, str]  # frame key -> frame id in the frame table
    screens: dict[str, tuple[int, int]]  # frame key -> size of the screen it shows
    table: dict[str, Any]  # atlases, strips and frames, for the viewer
    atlases: list[tuple[str, str]]  # (element id, data URI)


class _Strips:
    """Cuts frames into downscaled strips, keeping each distinct strip once.

    A strip is known by a key: its geometry and 128-bit hashes of its source rows (xxh3, not
    a cryptographic hash, seeded afresh for every report: a collision, which takes more than
    chance, would put a wrong strip in a picture, never in the data). Threads share the work:
    ISA-L, xxhash and Pillow release the GIL while they inflate, hash and scale, and the
    dictionaries are only read and set (atomic in CPython); two threads that meet the same
    new strip at once both scale it, and keep one.
    """

    def __init__(self, width: int) -> None:
        self.width = width
        self.images: dict[bytes, bytes] = {}  # key -> the hash of the downscaled strip
        self.pixels: dict[bytes, Image.Image] = {}  # that hash -> the downscaled strip
        # A band (row stride, first row, compressed bytes) -> its rows, and the hashes of its
        # rows between strip boundaries: (first row in the band, hash), top down.
        self.bands: dict[tuple[int, int, bytes], tuple[int, list[tuple[int, bytes]]]] = {}
        self.seed = int.from_bytes(os.urandom(8), "big")
        self.banded = self.unbanded = 0  # frames read band by band, and not

    def frame(self, path: Path) -> _Decoded:
        """The size of the frame's screen and its strips (hashes of their downscaled pixels),
        top down; None when it cannot be read."""
        try:
            data = path.read_bytes()
        except OSError:
            return None
        plain = _plain_png(data)
        if plain is not None:
            width, height, stream = plain
            keys = None
            # Frames from before bands have none: after a few, do not look for them any more.
            if self.banded or self.unbanded < _BAND_TRIES:
                keys = self._banded(width, height, stream)
                if keys is None:
                    self.unbanded += 1
                else:
                    self.banded += 1
            if keys is None:
                keys = self._plain(width, height, stream)
            if keys is not None:
                return (width, height), keys
        try:
            with Image.open(io.BytesIO(data)) as image:
                rgb = image.convert("RGB")
        except (OSError, ValueError, Image.DecompressionBombError):
            return None  # a truncated or foreign file: the viewer says "no frame"
        # Keyed by their downscaled pixels: the source rows are not at hand.
        out_w, k, strips = _geometry(rgb.width, rgb.height, self.width)
        scaled = _downscale(rgb, k, out_w, [(n, out_h) for _, n, out_h in strips])
        return rgb.size, [self._keep(strip) for strip in scaled if strip is not None]

    def _plain(self, width: int, height: int, stream: bytes) -> list[bytes] | None:
        """The strips of a PNG whose rows are stored unfiltered, as GhostEI writes frames
        (``png.encode_frame``); None when it is not one after all."""
        stride = 3 * width + 1  # a row: its filter byte, then RGB
        try:  # in one call: the GIL is released once, the rows are allocated once
            rows = isal_zlib.decompressobj().decompress(stream, height * stride)
        except _InflateError:  # a corrupt stream
            return None
        if len(rows) != height * stride or rows[::stride].count(0) != height:
            return None  # truncated, or filtered rows: Pillow decodes those
        view = memoryview(rows)
        strips = _geometry(width, height, self.width)[2]
        keys = [
            b"%d,%d,%d:" % (width, n, out_h)
            + xxhash.xxh3_128_digest(view[y * stride : (y + n) * stride], self.seed)
            if out_h
            else None
            for y, n, out_h in strips
        ]
        return self._scale_new(
            width, height, keys, lambda y0, y1: view[y0 * stride + 1 : y1 * stride]
        )

    def _banded(self, width: int, height: int, stream: bytes) -> list[bytes] | None:
        """The strips of a frame deflated in bands, each ended by a full flush, as
        ``png.encode_frame`` writes them; None when it is not one.

        After a full flush nothing refers back, so a band inflates on its own. A band seen
        before (the same compressed bytes at the same rows) is not inflated again: the hashes
        of its rows between strip boundaries are known. Only bands never seen are inflated,
        and one seen before only when a new strip needs its rows.
        """
        stride = 3 * width + 1
        strips = _geometry(width, height, self.width)[2]
        cuts = {y for y, _, _ in strips}
        if len(stream) < 2 or stream[0] & 0x0F != 8 or stream[1] & 0x20:
            return None  # not deflate, or with a preset dictionary
        bands: list[tuple[int, int, int, int]] = []  # first row, rows, start, end
        pieces: list[tuple[int, bytes]] = []  # rows between cuts: (first row, hash)
        raws: dict[int, bytes] = {}  # band number -> its rows, once inflated
        pos, top = 2, 0  # after the zlib header
        while top < height:
            end = stream.find(_SYNC, pos) + len(_SYNC)
            if end < len(_SYNC):
                return None
            known = self.bands.get((stride, top, stream[pos:end]))
            if known is None:
                found = _band(stream, pos, end, stride)
                if found is None:
                    return None
                end, raw = found
                rows = len(raw) // stride
                bounds = sorted({0, rows} | {c - top for c in cuts if top < c < top + rows})
                view = memoryview(raw)
                known = (
                    rows,
                    [
                        (a, xxhash.xxh3_128_digest(view[a * stride : b * stride], self.seed))
                        for a, b in itertools.pairwise(bounds)
                    ],
                )
                self.bands.setdefault((stride, top, stream[pos:end]), known)
                raws[len(bands)] = raw
            rows, hashes = known
            bands.append((top, rows, pos, end))
            pieces.extend((top + a, digest) for a, digest in hashes)
            top += rows
            pos = end
        if top != height:
            return None
        keys: list[bytes | None] = []
        first = 0
        for y, n, out_h in strips:
            last = first
            while last < len(pieces) and pieces[last][0] < y + n:
                last += 1
            digests = b"".join(digest for _, digest in pieces[first:last])
            keys.append(b"%d,%d,%d:" % (width, n, out_h) + digests if out_h else None)
            first = last

        def rows_between(y0: int, y1: int) -> bytes | None:
            parts = []
            for i, (band_top, rows, start, end) in enumerate(bands):
                if band_top < y1 and band_top + rows > y0:
                    if i not in raws:
                        found = _band(stream, start, end, stride)
                        if found is None:
                            return None
                        raws[i] = found[1]
                    a, b = max(y0, band_top) - band_top, min(y1, band_top + rows) - band_top
                    parts.append(memoryview(raws[i])[a * stride : b * stride])
            parts[0] = parts[0][1:]  # from the first pixel: frombuffer takes no offset
            return b"".join(parts)

        return self._scale_new(width, height, keys, rows_between)

    def _scale_new(
        self,
        width: int,
        height: int,
        keys: list[bytes | None],
        rows_between: Callable[[int, int], bytes | memoryview | None],
    ) -> list[bytes] | None:
        """The hashes of the pixels of a frame's strips, given their keys (None: a strip too
        thin to make a row). The strips not seen before are scaled, each run of consecutive
        ones at once, from ``rows_between(first row, end row)``: unfiltered rows with their
        filter bytes, the first one's left out."""
        out_w, k, strips = _geometry(width, height, self.width)
        stride = 3 * width + 1
        start = 0
        while start < len(strips):
            key = keys[start]
            if key is None or key in self.images:
                start += 1
                continue
            end = start + 1
            while end < len(strips) and keys[end] is not None and keys[end] not in self.images:
                end += 1
            y0, y1 = strips[start][0], strips[end - 1][0] + strips[end - 1][1]
            rows = rows_between(y0, y1)
            if rows is None:
                return None
            image = Image.frombuffer(
                "RGB", (width, y1 - y0), cast(bytes, rows), "raw", "RGB", stride, 1
            )
            sizes = [(n, out_h) for _, n, out_h in strips[start:end]]
            for key, strip in zip(keys[start:end], _downscale(image, k, out_w, sizes), strict=True):
                assert key is not None and strip is not None
                self.images.setdefault(key, self._keep(strip))
            start = end
        return [self.images[key] for key in keys if key is not None]

    def _keep(self, strip: Image.Image) -> bytes:
        """Keep a downscaled strip once however many sources it has; its hash."""
        digest = b"%d,%d:" % strip.size + xxhash.xxh3_128_digest(strip.tobytes(), self.seed)
        self.pixels.setdefault(digest, strip)
        return digest


def _band(stream: bytes, start: int, end: int, stride: int) -> tuple[int, bytes] | None:
    """The band of ``stream`` from ``start`` (where a full flush left off) and its rows.

    ``end`` is just after the first sync marker found; deflated data may hold those four bytes
    too, so a band is taken to end there only if, followed by a final empty block, it inflates
    on its own to whole unfiltered rows and ends the stream: otherwise the next marker is tried.
    """
    for _ in range(_BAND_TRIES):
        inflater = isal_zlib.decompressobj(-15)  # raw deflate
        try:
            raw = inflater.decompress(stream[start:end] + _FINAL_EMPTY_BLOCK)
        except _InflateError:
            raw = b""
        if inflater.eof and raw and len(raw) % stride == 0:
            return (end, raw) if raw[::stride].count(0) == len(raw) // stride else None
        found = stream.find(_SYNC, end)
        if found < 0:
            return None
        end = found + len(_SYNC)
    return None


def _plain_png(data: bytes) -> tuple[int, int, bytes] | None:
    """(width, height, zlib stream) of an 8-bit RGB, non-interlaced PNG; None for another."""
    if not data.startswith(PNG_SIGNATURE):
        return None
    pos, header, idat = len(PNG_SIGNATURE), b"", []
    while pos + 8 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, pos)
        if kind == b"IHDR":
            header = data[pos + 8 : pos + 8 + length]
        elif kind == b"IDAT":
            idat.append(data[pos + 8 : pos + 8 + length])
        elif kind == b"IEND":
            break
        pos += 12 + length
    if len(header) != 13 or not idat:
        return None
    width, height, *kind_of = struct.unpack(">IIBBBBB", header)
    if kind_of != [8, 2, 0, 0, 0] or not width or not height:  # 8-bit RGB, not interlaced
        return None
    if Image.MAX_IMAGE_PIXELS and width * height > Image.MAX_IMAGE_PIXELS:
        return None  # Pillow refuses it as a decompression bomb: no frame
    return width, height, b"".join(idat)


@functools.lru_cache(maxsize=16)
def _geometry(
    width: int, height: int, frame_width: int
) -> tuple[int, int, tuple[tuple[int, int, int], ...]]:
    """How a frame is cut and scaled: the output width, the box-reduce factor, and the strips
    as (first source row, source rows, output rows).

    A strip's source rows are a multiple of the reduce factor, so reducing strip by strip is
    reducing the frame; output rows are rounded cumulatively, so the frame's downscaled height
    is its height scaled, rounded. A strip too thin to make a row of its own has 0 rows.
    Frames of a run are of one size or two: the answer is kept.
    """
    out_w = min(frame_width, width)
    k = max(1, width // out_w)
    rows = k * max(1, round(STRIP_ROWS * width / out_w / k))
    strips = []
    for y in range(0, height, rows):
        n = min(rows, height - y)
        top, bottom = round(y * out_w / width), round((y + n) * out_w / width)
        strips.append((y, n, bottom - top))
    return out_w, k, tuple(strips)


def _downscale(
    image: Image.Image, k: int, width: int, strips: Sequence[tuple[int, int]]
) -> list[Image.Image | None]:
    """Consecutive strips of ``image``, top down, given as (source rows, output rows), each
    scaled on its own (None for one of no rows): a box reduce by ``k``, then bilinear.

    A strip's source rows are a multiple of ``k`` (but the frame's last), so reducing them
    all at once is reducing each; bilinear scales rows apart from columns, and only columns
    can be scaled all at once: rows are scaled strip by strip, so that no strip's pixels
    depend on its neighbours'. Scaling columns once, not per strip, saves a third of the time.
    """
    reduced = image.reduce(k) if k > 1 else image
    if reduced.width != width:
        reduced = reduced.resize((width, reduced.height), Image.Resampling.BILINEAR)
    out: list[Image.Image | None] = []
    top = 0
    for n, out_h in strips:
        rows = -(-n // k)
        strip = reduced.crop((0, top, width, top + rows))
        top += rows
        if out_h and rows != out_h:
            strip = strip.resize((width, out_h), Image.Resampling.BILINEAR)
        out.append(strip if out_h else None)
    return out


def _in_order(
    pool: ThreadPoolExecutor,
    work: Callable[[Path], _Decoded],
    items: Iterable[tuple[str, Path]],
    ahead: int,
) -> Iterator[tuple[str, _Decoded]]:
    """``work`` done in ``pool`` on each item, the results in order; at most ``ahead`` items
    are queued at once, so that work submitted meanwhile (atlases) is not queued behind all."""
    queue: deque[tuple[str, Future[_Decoded]]] = deque()
    for key, path in items:
        queue.append((key, pool.submit(work, path)))
        if len(queue) >= ahead:
            key, job = queue.popleft()
            yield key, job.result()
    while queue:
        key, job = queue.popleft()
        yield key, job.result()


class _Packer:
    """Lays the frames out as they are decoded, in order of first use: numbers their strips,
    places each new one in the current atlas, and hands each full atlas to ``encode``.

    Strips are numbered and placed in order of first use, so an episode's are close together:
    opening an episode decodes a few atlases, not all.
    """

    def __init__(
        self, strips: _Strips, encode: Callable[[list[tuple[int, Image.Image]]], Future[str]]
    ) -> None:
        self.strips = strips
        self.encode = encode
        self.ids: dict[str, str] = {}  # frame key -> frame id
        self.screens: dict[str, tuple[int, int]] = {}
        self.frames: dict[str, list[int]] = {}  # frame id -> width, height, strip numbers
        self.numbers: dict[bytes, int] = {}  # strip (the hash of its pixels) -> its number
        self.placed: list[list[int]] = []  # per strip number: atlas, row, width, height
        self.group: list[tuple[int, Image.Image]] = []  # the current atlas: (row, strip)
        self.row = 0
        self.encoded: list[Future[str]] = []

    def add(self, key: str, decoded: _Decoded) -> None:
        if decoded is None:
            return
        screen, keys = decoded
        numbers = []
        for k in keys:
            number = self.numbers.get(k)
            if number is None:
                number = self.numbers[k] = len(self.numbers)
                # The strip leaves the decoder's keeping for its atlas's, freed once encoded.
                self._place(self.strips.pixels.pop(k))
            numbers.append(number)
        fid = self.ids[key] = f"f{len(self.ids)}"
        self.screens[key] = screen
        width = max((self.placed[n][2] for n in numbers), default=0)
        self.frames[fid] = [width, sum(self.placed[n][3] for n in numbers), *numbers]

    def _place(self, image: Image.Image) -> None:
        slot = -(-image.height // SLOT_ROWS) * SLOT_ROWS
        if self.group and self.row + slot > ATLAS_ROWS:
            self.flush()
        self.placed.append([len(self.encoded), self.row, image.width, image.height])
        self.group.append((self.row, image))
        self.row += slot

    def flush(self) -> None:
        """Encode the current atlas."""
        if self.group:
            self.encoded.append(self.encode(self.group))
            self.group, self.row = [], 0

    def finish(self) -> _Frames:
        self.flush()
        atlases = [(f"a{i}", job.result()) for i, job in enumerate(self.encoded)]
        table = {"atlases": [a for a, _ in atlases], "strips": self.placed, "frames": self.frames}
        return _Frames(self.ids, self.screens, table, atlases)


def _atlas(group: Sequence[tuple[int, Image.Image]], fmt: FrameFormat) -> str:
    """Strips stacked at their rows, as one data URI."""
    last_row, last = group[-1]
    height = last_row + -(-last.height // SLOT_ROWS) * SLOT_ROWS
    atlas = Image.new("RGB", (max(image.width for _, image in group), height))
    for row, image in group:
        atlas.paste(image, (0, row))
        pad = -image.height % SLOT_ROWS
        if pad:  # the slot's rest repeats the strip's last row: no edge to encode
            edge = image.crop((0, image.height - 1, image.width, image.height))
            atlas.paste(edge.resize((image.width, pad)), (0, row + image.height))
    buf = io.BytesIO()
    if fmt == "webp":
        atlas.save(buf, "WEBP", quality=WEBP_QUALITY, method=WEBP_METHOD)
    elif fmt == "jpeg":
        atlas.save(buf, "JPEG", quality=JPEG_QUALITY, optimize=True)
    else:
        atlas.save(buf, "PNG")
    return f"data:image/{fmt};base64,{base64.b64encode(buf.getvalue()).decode()}"


# ----- embedding -----------------------------------------------------------------------------

# Characters that could end a <script> element or open a comment in it, escaped the JSON way.
_SCRIPT_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _json_script(value: Any) -> Markup:
    """JSON that is safe as the content of a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return Markup(text.translate(_SCRIPT_SAFE))


def _packed(value: Any) -> str:
    """JSON deflated, in base64: the viewer inflates it (``DecompressionStream``) when needed.

    The episodes' steps and events are four fifths of the page's JSON and deflate to a fifth;
    base64 has no character that could end the script element that holds it.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")


def environment() -> jinja2.Environment:
    """The report package's templates, autoescaped, with its filters."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ghostei.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = _pct
    env.filters["ci"] = interval
    return env


def asset(name: str) -> str:
    """A file of the templates folder (CSS, JavaScript), to inline."""
    return resources.files("ghostei.report").joinpath("templates", name).read_text("utf-8")
