"""The compositor's frames are the full redraw's, byte for byte, on every built-in case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ghostei import runner
from ghostei.actions import Action
from ghostei.cases import builtin_cases
from ghostei.cases.schema import Case
from ghostei.cli import main
from ghostei.observation import Observation, encode_png
from ghostei.runner import RunConfig, run_episode
from ghostei.sim.compositor import Compositor
from ghostei.sim.phone import SimPhone
from ghostei.sim.render import Renderer

CASES = builtin_cases()


class _CheckedPhone(SimPhone):
    """A phone whose every observation is composed and also fully redrawn, and compared."""

    frames = 0
    reused = 0

    def observe(self) -> Observation:
        obs = super().observe()
        windows = self._windows_cache
        full = Renderer(self.width, self.height, self.density).render(windows)
        composed = obs.screenshot
        assert composed.tobytes() == full.tobytes(), (
            f"step {obs.step}: composed frame differs from a full redraw "
            f"(windows {[w.name for w in windows]})"
        )
        _CheckedPhone.frames += 1
        return obs


@pytest.mark.parametrize("agent", ["gullible", "oracle"])
def test_composed_frames_equal_full_redraws_on_every_builtin_case(
    agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gullible walks into every attack surface (overlays, heads-up, share sheets, the
    # keyboard over forms); the oracle completes every task. One compositor serves all cases,
    # as one does all the episodes of a worker, so surfaces cached by one case are reused
    # (and must be right) in the next.
    def device(config: RunConfig, case: Case) -> SimPhone:
        return _CheckedPhone(config.width, config.height)

    monkeypatch.setattr(runner, "make_device", device)
    _CheckedPhone.frames = 0
    # At half the default size (a quarter of the pixels to redraw; the windows, their keys
    # and the caching are the same), and at full size on a few cases.
    small = RunConfig(agents=(agent,), frames="none", max_steps=12, width=540, height=1200)
    for case in CASES:
        record = run_episode(case, agent, small, None)
        assert record.error is None, (case.id, record.error)
    full = RunConfig(agents=(agent,), frames="none", max_steps=12)
    for case in CASES[::27]:
        record = run_episode(case, agent, full, None)
        assert record.error is None, (case.id, record.error)
    assert _CheckedPhone.frames >= 2 * len(CASES)


def test_a_clock_change_redraws_the_status_bar_only(monkeypatch: pytest.MonkeyPatch) -> None:
    phone = SimPhone()
    case = CASES[0]
    phone.reset(case.setup)
    phone.act(Action(action_type="open_app", app_name="Booking"))
    compositor = Compositor(phone.renderer)
    drawn: list[str] = []
    real = phone.renderer.draw_window

    def spy(img: Any, window: Any) -> None:
        drawn.append(window.kind)
        real(img, window)

    monkeypatch.setattr(phone.renderer, "draw_window", spy)
    first = compositor.render(phone.windows())
    assert drawn[0] == "activity"
    drawn.clear()
    same = compositor.render(phone.windows())
    assert drawn == [] and same.tobytes() == first.tobytes()
    phone._clock = phone._clock.replace(minute=(phone._clock.minute + 7) % 60)
    later = compositor.render(phone.windows())
    # The activity is pasted; the status bar (translucent, over it) and what lies above the
    # status bar are drawn again.
    assert "activity" not in drawn and "status_bar" in drawn
    assert later.tobytes() == Renderer(1080, 2400, phone.density).render(phone.windows()).tobytes()


def test_an_unchanged_screen_is_encoded_once() -> None:
    phone = SimPhone()
    phone.reset(CASES[0].setup)
    compositor = Compositor(phone.renderer)
    windows = phone.windows()
    first = compositor.frame(windows)
    assert first[0] == encode_png(phone.renderer.render(windows))
    assert compositor.frame(phone.windows()) is first  # remembered, not encoded again


def test_frames_are_named_by_pixels_and_identical_whatever_the_workers(tmp_path: Path) -> None:
    # The deflater's bytes for one screen differed between the worker processes of a run;
    # names (and so the frame references of every trajectory) must not.
    def frame_names(workers: str) -> dict[str, list[str]]:
        out = tmp_path / f"w{workers}"
        result = CliRunner().invoke(
            main,
            [*("run", "--cases", "1-6", "--workers", workers, "--out", str(out))],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        names = {}
        for doc_path in sorted(out.glob("episodes/*/*/trajectory.json")):
            doc = json.loads(doc_path.read_text())
            names[str(doc_path.relative_to(out))] = [Path(f).name for f in doc["frames"]]
        return names

    one, two = frame_names("1"), frame_names("2")
    assert one == two and len(one) == 18


@pytest.mark.parametrize(
    ("value", "xy", "size_px", "weight"),
    [
        ("Hotel Lumen", (40, 300), 44, 400),
        ("Pay with Visa •••• 4242", (13, 7), 37, 600),
        ("", (5, 5), 30, 400),
        ("   ", (5, 5), 30, 400),
        ("✓ Ünïcødé — 你好", (100, 50), 42, 700),
        ("x", (77.5, 31.25), 48, 700),  # glyph icons sit at fractional points
        ("+", (12.75, 90.6), 66, 700),
    ],
)
def test_cached_text_draws_what_pillow_draws(
    value: str, xy: tuple[float, float], size_px: int, weight: int
) -> None:
    from PIL import Image, ImageDraw

    from ghostei.sim.render import draw_text, font

    ours, pillows = (Image.new("RGB", (900, 200), (243, 237, 247)) for _ in range(2))
    for _ in range(2):  # the second time from the cache
        draw_text(ImageDraw.Draw(ours), xy, value, size_px, weight, (29, 27, 32))
    ImageDraw.Draw(pillows).text(xy, value, font=font(size_px, weight), fill=(29, 27, 32))
    ImageDraw.Draw(pillows).text(xy, value, font=font(size_px, weight), fill=(29, 27, 32))
    assert ours.tobytes() == pillows.tobytes()
