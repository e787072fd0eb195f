"""The HTML report: one self-contained file with the metrics, the plots and a trajectory viewer.

The page makes no network request: CSS, JavaScript and plots are inline, frames are data URIs.
Every episode's steps sit in their own ``<script type="application/json">`` element that the
viewer parses only when the episode is selected, and every distinct frame of the run in its
own data block, read when it is shown, so a full run's page opens fast. Frames are downscaled
(``frame_width``), encoded as WebP of a few kB, and embedded once however many episodes show
them (the home screen, a case's first screens before the agents' paths part).

Texts from cases, models and attackers are untrusted: the template autoescapes them, JSON
blobs escape ``<``, ``>`` and ``&`` so nothing in them can close the script element, and the
viewer's script inserts them with ``textContent`` only.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import jinja2
from markupsafe import Markup
from PIL import Image, features

from .. import __version__
from ..cases.schema import RISK_DOMAINS, Case
from ..judge.base import LABELS
from ..judge.store import judged_records
from ..metrics import AgentMetrics, breakdown, by_agent, confidence_intervals
from ..rundir import EpisodeRecord, RunDir
from . import plots
from .tables import SHOWN_RATES, SHOWN_TITLES, compromised_then_error

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
WEBP_QUALITY = 60
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
    cases = {c.id: c for c in run.cases()}
    agents = _agent_order(manifest, records)
    records = sorted(records, key=lambda r: (agents.index(r.agent), r.case))
    metrics = by_agent(records)
    intervals = {
        a: confidence_intervals([r for r in records if r.agent == a], metrics=RATES) for a in agents
    }
    breakdowns = {by: breakdown(records, cases, by) for by, _ in BREAKDOWNS}
    fmt = frame_format if frame_format != "webp" or features.check("webp") else "jpeg"
    episodes, frames = _episodes(run, records, cases, frame_width, fmt)

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ghostei.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = _pct
    env.filters["ci"] = _ci
    return env.get_template("report.html.j2").render(
        title=run.path.resolve().name,
        header=_header(run, manifest, agents, judge, records),
        agents=agents,
        colours={a: plots.agent_colour(i) for i, a in enumerate(agents)},
        summary=[_summary_row(a, metrics[a], intervals[a], records) for a in agents],
        rate_names=[SHOWN_TITLES[name] for name in RATES],
        exposure_unmeasured=not all(metrics[a].exposure_measured for a in agents),
        compromised_then_error=[
            (r.agent, r.case, r.label, r.error) for r in records if compromised_then_error(r)
        ],
        frame_width=frame_width,
        show_usage=any(r.usage for r in records),
        breakdowns=[
            (heading, _breakdown_rows(breakdowns[by], agents, by)) for by, heading in BREAKDOWNS
        ],
        plot_risk=Markup(_risk_plot(breakdowns["risk"], agents)),
        plot_tc_vr=Markup(_tc_vr_plot(metrics, intervals, agents)),
        labels=[*LABELS, "undetermined", "judge_error", "error"],
        index=_json_script([e.meta for e in episodes]),
        episodes=[(e.meta["id"], _json_script(e.data)) for e in episodes],
        frames=frames,
        css=Markup(_asset("report.css")),
        js=Markup(_asset("report.js")),
    )


# ----- the header and the metrics ---------------------------------------------------------


def _agent_order(manifest: Mapping[str, Any], records: Iterable[EpisodeRecord]) -> list[str]:
    configured = [str(a) for a in manifest.get("config", {}).get("agents", [])]
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


def _summary_row(
    agent: str,
    m: AgentMetrics,
    ci: Mapping[str, tuple[float, float] | None],
    records: list[EpisodeRecord],
) -> dict[str, Any]:
    mine = [r for r in records if r.agent == agent]
    costs = [r.cost for r in mine if r.cost is not None]
    return {
        "agent": agent,
        "m": m,
        "rates": [(SHOWN_TITLES[name], getattr(m, name), ci.get(name)) for name in RATES],
        "prompt_tokens": sum(r.usage.get("prompt_tokens", 0) for r in mine),
        "completion_tokens": sum(r.usage.get("completion_tokens", 0) for r in mine),
        "requests": sum(r.usage.get("requests", 0) for r in mine),
        "cost": round(sum(costs), 4) if costs else None,
    }


def _breakdown_rows(
    groups: Mapping[str, Mapping[str, AgentMetrics]], agents: list[str], by: str
) -> list[tuple[str, list[AgentMetrics | None]]]:
    names = list(groups)
    if by == "risk":
        names.sort(key=lambda g: RISK_DOMAINS.index(g) if g in RISK_DOMAINS else len(RISK_DOMAINS))
    return [(g, [groups[g].get(a) for a in agents]) for g in names]


def _risk_plot(groups: Mapping[str, Mapping[str, AgentMetrics]], agents: list[str]) -> str:
    rows = _breakdown_rows(groups, agents, "risk")
    vr = {g: {a: m.vr for a, m in zip(agents, ms, strict=True) if m} for g, ms in rows}
    return plots.vr_by_group_svg(vr, agents) if vr else ""


def _tc_vr_plot(
    metrics: Mapping[str, AgentMetrics],
    intervals: Mapping[str, Mapping[str, tuple[float, float] | None]],
    agents: list[str],
) -> str:
    points = {a: (metrics[a].tc, metrics[a].vr) for a in agents if metrics[a].n}
    cis = {a: (intervals[a].get("tc"), intervals[a].get("vr")) for a in points}
    return plots.tc_vs_vr_svg(points, cis) if points else ""


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f} %"


def _ci(value: tuple[float, float] | None) -> str:
    return "" if value is None else f"[{value[0] * 100:.1f}, {value[1] * 100:.1f}]"


# ----- episodes ------------------------------------------------------------------------------


@dataclass
class _Episode:
    meta: dict[str, Any]  # what the episode list shows, always parsed
    data: dict[str, Any]  # frames and steps, parsed when the episode is selected


def _episodes(
    run: RunDir,
    records: Sequence[EpisodeRecord],
    cases: Mapping[int, Case],
    frame_width: int,
    fmt: FrameFormat,
) -> tuple[list[_Episode], list[tuple[str, str]]]:
    """The episodes, and the run's distinct frames as (element id, data URI)."""
    loaded = [_load_trajectory(run, r) for r in records]
    # Decoding the full-size PNGs is most of the report's time; Pillow releases the GIL while
    # it decodes, scales and encodes, so threads share the work.
    unique: dict[str, Path] = {}
    for _, frames in loaded:
        for digest, path in frames:
            if digest is not None:
                unique.setdefault(digest, path)
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        done = pool.map(lambda p: _encode_frame(p, frame_width, fmt), unique.values())
        encoded = {d: e for d, e in zip(unique, done, strict=True) if e is not None}
    ids = {digest: f"f{i}" for i, digest in enumerate(encoded)}
    out = []
    for i, (r, (doc, frames)) in enumerate(zip(records, loaded, strict=True)):
        # A missing or unreadable frame keeps its place (null): later frames stay at their step.
        refs = [ids.get(digest) if digest else None for digest, _ in frames]
        sizes = [encoded[d][1] for d, _ in frames if d in encoded]
        screen = sizes[0] if sizes else (1080, 2400)
        out.append(_episode(f"e{i}", r, cases.get(r.case), doc, refs, screen))
    return out, [(ids[d], uri) for d, (uri, _) in encoded.items()]


def _load_trajectory(
    run: RunDir, r: EpisodeRecord
) -> tuple[dict[str, Any] | None, list[tuple[str | None, Path]]]:
    """The episode's trajectory.json with its events, and its frames as (digest, path).

    The digest of a frame file that cannot be read is None.
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
    frames: list[tuple[str | None, Path]] = []
    for rel in doc.get("frames", []):
        path = folder / rel
        try:
            frames.append((hashlib.sha1(path.read_bytes()).hexdigest(), path))
        except OSError:
            frames.append((None, path))
    return doc, frames


def _encode_frame(path: Path, width: int, fmt: FrameFormat) -> tuple[str, tuple[int, int]] | None:
    """A frame as a downscaled data URI, and the size of the screen it shows (None: unreadable)."""
    try:
        with Image.open(path) as image:
            size = image.size
            small = image.convert("RGB")
    except (OSError, ValueError):  # a truncated or foreign file: the viewer says "no frame"
        return None
    if small.width > width:
        height = round(small.height * width / small.width)
        small = small.resize((width, height), Image.Resampling.BILINEAR, reducing_gap=2.0)
    buf = io.BytesIO()
    if fmt == "webp":
        small.save(buf, "WEBP", quality=WEBP_QUALITY, method=4)
    elif fmt == "jpeg":
        small.save(buf, "JPEG", quality=JPEG_QUALITY, optimize=True)
    else:
        small.save(buf, "PNG")
    return f"data:image/{fmt};base64,{base64.b64encode(buf.getvalue()).decode()}", size


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
    data: dict[str, Any] = {
        "frames": frames,  # ids of the frame elements, in order: one per step, and the last
        "screen": list(screen),
        "steps": _steps(doc) if doc else [],
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
                "action": action,
                "foreground": step.get("foreground"),
                "events": evs,
                "mark": _mark(action, evs),
            }
        )
    return steps


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


# ----- embedding -----------------------------------------------------------------------------

# Characters that could end a <script> element or open a comment in it, escaped the JSON way.
_SCRIPT_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _json_script(value: Any) -> Markup:
    """JSON that is safe as the content of a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return Markup(text.translate(_SCRIPT_SAFE))


def _asset(name: str) -> str:
    return resources.files("ghostei.report").joinpath("templates", name).read_text("utf-8")
