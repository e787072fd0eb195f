"""Which frames of an episode are saved: all of them, the key ones, or none (``--frames``).

``keyframes`` keeps what the LLM judge and the viewer need to follow an episode: the first
and last frames, the frame that first showed the attack, the frames around every step where
the agent complied (or did something with an effect outside its app), and every frame where
the screen changed — a new screen, an overlay, the keyboard or a sheet coming or going, not a
character typed into a field. The others are dropped and keep their place in the trajectory as
``null``, so every kept frame stays at its step.

On the simulated phone a frame can be drawn after the episode, from the laid-out windows the
observation holds, so dropped frames cost nothing. A device whose observations go stale when
it acts (a real phone) is captured at once and the frame dropped afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from .events import Event
from .judge.keyframes import COMPLIANCE_EVENTS
from .observation import Observation
from .verdict import Verdict

FramesMode = Literal["all", "keyframes", "none"]
FRAMES_MODES: tuple[str, ...] = get_args(FramesMode)


@dataclass
class _Pending:
    frame: Callable[[], tuple[bytes, str]]  # the PNG and its name
    xml: Callable[[], str]
    screen: tuple[Any, ...]  # the screen's skeleton: what tells a new screen from an edit


@dataclass
class FrameRecorder:
    """Collects an episode's frames as the policy says; :meth:`finish` produces them."""

    mode: FramesMode = "all"
    _pending: list[_Pending | None] = field(default_factory=list)

    def keep(self, obs: Observation) -> None:
        """Note the frame of an observation the agent is about to act on (or the last one)."""
        if self.mode == "none":
            return
        if self.mode == "all" or not obs.lasting:
            frame, xml = obs.frame, obs.xml  # now: the device may move on
            pending = _Pending(lambda: frame, lambda: xml, ())
        else:
            pending = _Pending(obs.frame_later(), obs.xml_later(), ())
        if self.mode != "all":
            pending.screen = screen_skeleton(obs)
        self._pending.append(pending)

    def skip(self) -> None:
        """Note a step taken on no observation (a program that acted without looking): its
        frame is null in the trajectory, whatever the policy."""
        if self.mode != "none":
            self._pending.append(None)

    def __len__(self) -> int:
        return len(self._pending)

    def finish(
        self,
        steps: Sequence[Mapping[str, Any]],
        events: Sequence[Event],
        *,
        exposed_step: int | None,
        verdict: Verdict | None,
    ) -> list[tuple[bytes, str, str] | None]:
        """Each frame as (PNG, its name, XML dump), or None where the policy dropped it."""
        keep: set[int] | None = None
        if self.mode == "keyframes":
            keep = keyframe_indices(
                [() if p is None else p.screen for p in self._pending],
                steps,
                events,
                exposed_step=exposed_step,
                verdict=verdict,
            )
        return [
            (*p.frame(), p.xml()) if p is not None and (keep is None or i in keep) else None
            for i, p in enumerate(self._pending)
        ]


def screen_skeleton(obs: Observation) -> tuple[Any, ...]:
    """The windows and elements on screen, without what typing changes (an edit's text)."""
    elements = tuple(
        (e.window, e.class_name, e.resource_id, "" if e.editable else e.text, e.content_desc)
        for e in obs.elements
    )
    return (*elements, obs.keyboard_shown)


def keyframe_indices(
    screens: Sequence[tuple[Any, ...]],
    steps: Sequence[Mapping[str, Any]],
    events: Sequence[Event],
    *,
    exposed_step: int | None,
    verdict: Verdict | None,
) -> set[int]:
    """The frames ``keyframes`` keeps: frame ``i`` is what the agent saw before step ``i``."""
    n = len(screens)
    if n == 0:
        return set()
    keep = {0, n - 1}
    if exposed_step is not None:
        keep.add(exposed_step)
    # A step that complied: the screen the agent acted on, and what its action led to.
    acted: set[int] = set()
    by_seq = {e.seq: e for e in events}
    for step in steps:
        seqs = step.get("events", [])
        if any(by_seq[s].kind in COMPLIANCE_EVENTS for s in seqs if s in by_seq):
            acted.add(int(step["step"]))
    if verdict is not None:
        for seqs in verdict.evidence.values():
            acted.update(by_seq[s].step for s in seqs if s in by_seq)
        if verdict.first_compliance_step is not None:
            acted.add(verdict.first_compliance_step)
        if verdict.diagnosis is not None and verdict.diagnosis.step is not None:
            acted.add(verdict.diagnosis.step)
    for i in acted:
        keep.update((i, i + 1))
    keep.update(i for i in range(1, n) if screens[i] != screens[i - 1])
    return {i for i in keep if 0 <= i < n}
