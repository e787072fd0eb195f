"""The report's plots, drawn with matplotlib and returned as inline SVG markup.

The SVG carries its glyphs as paths (no font is loaded by the browser) and no metadata,
prolog or DOCTYPE, so it can sit inside an HTML page that makes no network request. A fixed
hash salt makes the element ids, and so the output, the same on every run.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import matplotlib
import matplotlib.style
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

# The colour of each agent, in the order agents appear in the report (matplotlib's tab10).
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)

Interval = tuple[float, float] | None


def agent_colour(i: int) -> str:
    """The colour of the i-th agent in every plot and legend of the report."""
    return PALETTE[i % len(PALETTE)]


def vr_by_group_svg(
    vr: Mapping[str, Mapping[str, float | None]],
    agents: Sequence[str],
    *,
    xlabel: str = "risk domain",
    id_prefix: str = "vr-by-group",
) -> str:
    """Grouped bars: VR (in %) per group on the x axis, one bar per agent.

    ``vr[group][agent]`` is a VR in [0, 1], or None where it is undefined (every episode a
    benign failure) or the agent has no episode in the group: that bar is left out and the
    slot is marked "n/a" so an absent bar is never read as 0 %.
    """
    groups = list(vr)
    # Wide enough for the groups' labels, narrow enough to sit beside the scatter plot.
    width = min(9.0, max(4.5, 1.2 + 0.75 * len(groups) * max(1, len(agents) / 2) ** 0.5))
    fig = Figure(figsize=(width, 3.6))
    ax = fig.add_subplot()
    slot = 0.8 / max(1, len(agents))
    for i, agent in enumerate(agents):
        for g, group in enumerate(groups):
            x = g - 0.4 + slot * (i + 0.5)
            value = vr[group].get(agent)
            if value is None:
                ax.text(x, 1, "n/a", ha="center", va="bottom", fontsize=6, color="#888888")
                continue
            ax.bar(x, value * 100, slot * 0.92, color=agent_colour(i))
            if value == 0:  # a zero bar has no height: say it, so it is not read as missing
                ax.text(x, 1, "0", ha="center", va="bottom", fontsize=6, color=agent_colour(i))
    ax.set_xticks(range(len(groups)), [_plain(g) for g in groups], rotation=20, ha="right")
    ax.set_ylim(0, 105)
    ax.set_ylabel("VR (%)")
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(
        handles=[Patch(color=agent_colour(i), label=_plain(a)) for i, a in enumerate(agents)],
        fontsize=8,
        frameon=False,
        ncols=min(len(agents), 5),
        loc="lower left",
        bbox_to_anchor=(0, 1.0),
    )
    _tidy(ax)
    return _svg(fig, id_prefix)


def tc_vs_vr_svg(
    points: Mapping[str, tuple[float, float | None]],
    intervals: Mapping[str, tuple[Interval, Interval]] | None = None,
    *,
    id_prefix: str = "tc-vs-vr",
) -> str:
    """Scatter of TC (y) against VR (x) per agent, in %, with 95 % intervals as error bars.

    ``points[agent] = (tc, vr)``; an agent whose VR is undefined is listed under the axes
    instead of being drawn at 0. ``intervals[agent] = (tc_ci, vr_ci)``.
    """
    fig = Figure(figsize=(5.2, 4.0))
    ax = fig.add_subplot()
    undefined: list[str] = []
    for i, (agent, (tc, vr)) in enumerate(points.items()):
        if vr is None:
            undefined.append(agent)
            continue
        tc_ci, vr_ci = (intervals or {}).get(agent, (None, None))
        ax.errorbar(
            vr * 100,
            tc * 100,
            xerr=_err(vr, vr_ci),
            yerr=_err(tc, tc_ci),
            fmt="o",
            markersize=7,
            color=agent_colour(i),
            ecolor=agent_colour(i),
            elinewidth=1,
            capsize=3,
            label=_plain(agent),
        )
        ax.annotate(_plain(agent), (vr * 100, tc * 100), xytext=(6, 6), textcoords="offset points")
    _percent_axes(ax, "VR (%) — lower is safer", "TC (%) — higher is better")
    if undefined:
        fig.text(0.01, 0.01, "VR undefined: " + _plain(", ".join(undefined)), fontsize=7)
    _tidy(ax)
    return _svg(fig, id_prefix)


# The hollow marker of each adaptive variant, in the order the variants are given.
VARIANT_MARKERS = ("s", "^", "D", "v", "P", "X", "<", ">")


@dataclass(frozen=True)
class TradeoffPoint:
    """One agent label in the trade-off plot."""

    label: str  # the agent label, which names the point's SVG group
    group: int  # its colour: the index of its base agent
    text: str  # what the point is labelled with: its defences
    x: float | None  # clean utility
    x_ci: Interval
    y: float | None  # VR under the standard attack
    y_ci: Interval
    variants: Mapping[str, tuple[float | None, Interval]] = field(default_factory=dict)


def point_id(kind: str, i: int, label: str) -> str:
    """The id of a point's SVG group (before the plot's prefix): ``point-standard-0-gullible``,
    ``point-app-styled-0-gullible_overlay-gate``."""
    return f"point-{kind}-{i}-" + re.sub(r"[^A-Za-z0-9_-]", "_", label)


def tradeoff_svg(
    points: Sequence[TradeoffPoint],
    variants: Sequence[str],
    groups: Sequence[str],
    *,
    id_prefix: str = "tradeoff",
) -> str:
    """Clean utility (x) against VR under attack (y) per agent label, in %, with 95 % intervals.

    A filled point per label at (clean utility, VR under the standard attack), coloured by its
    agent (``groups``, for the legend) and labelled by its defences; for each variant, a hollow
    marker at (clean utility, VR under the variant) joined to it by a thin line. A label with
    no clean utility, or no VR defined, is listed under the axes instead. rcParams are
    matplotlib's defaults whatever the user's matplotlibrc: the same points, the same bytes.
    """
    with matplotlib.style.context("default"):  # matplotlib's defaults, for this figure only
        fig = Figure(figsize=(6.4, 4.8))
        ax = fig.add_subplot()
        left_out: list[str] = []
        labelled: dict[tuple[float, float], int] = {}  # a point's place -> labels there - 1
        for i, p in enumerate(points):
            colour = agent_colour(p.group)
            drawn = False
            if p.x is None:
                left_out.append(f"{p.label} (no clean run)")
                continue
            x = p.x * 100
            if p.y is not None:
                bars = ax.errorbar(
                    x,
                    p.y * 100,
                    xerr=_err(p.x, p.x_ci),
                    yerr=_err(p.y, p.y_ci),
                    fmt="o",
                    markersize=7,
                    color=colour,
                    ecolor=colour,
                    elinewidth=1,
                    capsize=3,
                    zorder=3,
                )
                bars.lines[0].set_gid(point_id("standard", i, p.label))
                drawn = True
            for j, variant in enumerate(variants):
                vr, _ = p.variants.get(variant, (None, None))
                if vr is None:
                    continue
                if p.y is not None:
                    ax.plot([x, x], [p.y * 100, vr * 100], color=colour, linewidth=0.7, alpha=0.6)
                ax.plot(
                    [x],
                    [vr * 100],
                    linestyle="none",
                    marker=VARIANT_MARKERS[j % len(VARIANT_MARKERS)],
                    markersize=7,
                    markerfacecolor="none",
                    markeredgecolor=colour,
                    markeredgewidth=1.2,
                    zorder=3,
                    gid=point_id(variant, i, p.label),
                )
                drawn = True
            if not drawn:
                left_out.append(f"{p.label} (VR undefined)")
                continue
            y = p.y if p.y is not None else next(v for v, _ in p.variants.values() if v is not None)
            # Labels of points that coincide are stacked, away from the nearer edge.
            spot = (round(x, 1), round(y * 100, 1))
            stacked = labelled[spot] = labelled.get(spot, -1) + 1
            dy = 5 + 11 * stacked if y <= 0.5 else 5 - 11 * stacked
            ax.annotate(
                _plain(p.text), (x, y * 100), xytext=(6, dy), textcoords="offset points", fontsize=8
            )
        _percent_axes(
            ax, "clean utility (%) — higher is better", "VR under attack (%) — lower is safer"
        )
        handles = [
            Line2D([], [], marker="o", linestyle="none", color=agent_colour(g), label=_plain(name))
            for g, name in enumerate(groups)
        ]
        handles.append(
            Line2D([], [], marker="o", linestyle="none", color="#444444", label="standard attack")
        )
        handles += [
            Line2D(
                [],
                [],
                marker=VARIANT_MARKERS[j % len(VARIANT_MARKERS)],
                linestyle="none",
                markerfacecolor="none",
                markeredgecolor="#444444",
                label=_plain(variant),
            )
            for j, variant in enumerate(variants)
        ]
        ax.legend(
            handles=handles,
            fontsize=8,
            frameon=False,
            ncols=min(len(handles), 4),
            loc="lower left",
            bbox_to_anchor=(0, 1.0),
        )
        if left_out:
            fig.text(0.01, 0.01, "not plotted: " + _plain("; ".join(left_out)), fontsize=7)
        _tidy(ax)
        return _svg(fig, id_prefix)


def _err(value: float, ci: Interval) -> list[list[float]] | None:
    # matplotlib wants distances below and above the point, never negative.
    if ci is None:
        return None
    lo, hi = ci
    return [[max(0.0, (value - lo) * 100)], [max(0.0, (hi - value) * 100)]]


def _plain(text: str) -> str:
    # A "$" would switch matplotlib to math mode; names are shown as typed.
    return text.replace("$", r"\$")


def _percent_axes(ax: Axes, xlabel: str, ylabel: str) -> None:
    """Two rates in percent, with a margin so points at 0 and 100 stay whole; a light grid."""
    ax.set_xlim(-5, 105)
    ax.set_ylim(-5, 105)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)


def _tidy(ax: Axes) -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_COMMENT = re.compile(r"\s*<!--.*?-->", re.S)


def _svg(fig: Figure, prefix: str) -> str:
    fig.tight_layout()
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "ghostei", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = _METADATA.sub("", _PROLOG.sub("", buf.getvalue(), count=1), count=1)
    text = _COMMENT.sub("", text)  # labels repeated as comments: size, and nothing to escape
    # Every figure names its parts figure_1, axes_1, ...: prefix the ids so two plots on one
    # page never share one.
    for old, new in (
        ('id="', f'id="{prefix}-'),
        ("url(#", f"url(#{prefix}-"),
        ('href="#', f'href="#{prefix}-'),
    ):
        text = text.replace(old, new)
    return text
