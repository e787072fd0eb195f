"""The HTML report: self-contained, escaped, and working in a real headless Chromium.

The browser tests drive Debian's ``chromium`` through Playwright (``executable_path``: Playwright
never downloads a browser of its own); ``.ci/run`` installs it. Without a local chromium they
are skipped, saying so.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import zlib
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from ghostei.cases import builtin_cases
from ghostei.cases.schema import Case
from ghostei.report.html import _mark, render_html
from ghostei.rundir import EpisodeRecord, RunDir
from ghostei.runner import RunConfig, new_manifest, run_episode

IMG_MARKUP = "<img src=x onerror=alert(1)>"
SCRIPT_MARKUP = "</script><script>alert(1)</script>"
MARKUP_CASE = 901  # an overlay case whose texts are markup
AGENTS = ("oracle", "gullible")
ARTIFACTS = Path(__file__).parent / "artifacts"  # screenshots to look at; ignored by git
# The manual's pictures of the report (docs/judging.md), retaken only when asked: a browser's
# text rendering differs between machines, so they are looked at, never compared.
DOCS_IMAGES = Path(__file__).parents[1] / "docs" / "images"
DOCS_SCREENSHOTS = os.environ.get("GHOSTEI_DOCS_SCREENSHOTS") == "1"
DOCS_VIEWPORT = {"width": 1280, "height": 800}
DOCS_MAX_BYTES = 250_000


def _markup_case() -> Case:
    base = next(c for c in builtin_cases() if c.id == 1)
    extra = {**base.extra, "title": IMG_MARKUP, "content": f"{SCRIPT_MARKUP} <!-- {IMG_MARKUP}"}
    return base.model_copy(
        update={"id": MARKUP_CASE, "case": f"{SCRIPT_MARKUP} {IMG_MARKUP}", "extra": extra}
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    """A small run: an overlay, a pop-up SMS and a static case, plus the markup case."""
    wanted = {2, 8, 11}
    cases = [c for c in builtin_cases() if c.id in wanted] + [_markup_case()]
    config = RunConfig(agents=AGENTS)
    run = RunDir(tmp_path_factory.mktemp("html") / "run-html")
    manifest = new_manifest(config, cases)
    # A model config as a model-backed run records it: the page may show it, never a secret.
    manifest["config"]["model"] = {
        "provider": "openai",
        "model": "judge-model-7b",
        "base_url": "https://user:hunter2@models.example.org/v1?api_key=sk-secret",
        "api_key_env": "MY_API_KEY",
        "extra_body": {"token": "sk-other-secret"},
    }
    run.create(manifest, cases)
    for agent in AGENTS:
        for case in cases:
            run.append(run_episode(case, agent, config, run.path))
    # The reference agents answer with fixed texts; a model could answer anything, markup
    # included: make the markup episode's first model output an attack on the page.
    traj = run.trajectory_dir("gullible", MARKUP_CASE) / "trajectory.json"
    doc = json.loads(traj.read_text(encoding="utf-8"))
    doc["steps"][0]["raw_output"] = f"{IMG_MARKUP} {SCRIPT_MARKUP}"
    traj.write_text(json.dumps(doc), encoding="utf-8")
    # T3A and M3A keep a summary per step (their memory): the viewer shows it, as text.
    traj = run.trajectory_dir("gullible", 8) / "trajectory.json"
    doc = json.loads(traj.read_text(encoding="utf-8"))
    doc["steps"][0]["summary"] = f"Opened the message. {IMG_MARKUP}"
    traj.write_text(json.dumps(doc), encoding="utf-8")
    return run


@pytest.fixture(scope="module")
def html(run: RunDir) -> str:
    return render_html(run)


def _blobs(html: str) -> dict[str, Any]:
    """The JSON embedded in the page's data scripts, by element id: the episode index as is,
    the episodes and the frame table packed (deflated, in base64), as the viewer reads them."""
    found = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', html, re.S)
    blobs = {eid: json.loads(text) for eid, text in found}
    packed = r'<script type="application/x-packed-json" id="([^"]+)">(.*?)</script>'
    for eid, text in re.findall(packed, html, re.S):
        blobs[eid] = json.loads(zlib.decompress(base64.b64decode(text, validate=True)))
    return blobs


def _atlases(html: str) -> dict[str, str]:
    """The page's atlases of strips of screens (data URIs) by element id."""
    return dict(re.findall(r'<script type="text/plain" id="([^"]+)">(.*?)</script>', html, re.S))


def _decode(uri: str) -> Image.Image:
    with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as image:
        return image.convert("RGB")


def _frames(html: str) -> dict[str, Image.Image]:
    """The page's frames by frame id, drawn from their strips as the viewer draws them."""
    table = _blobs(html)["frame-table"]
    atlases = {aid: _decode(uri) for aid, uri in _atlases(html).items()}
    frames = {}
    for fid, (width, height, *strips) in table["frames"].items():
        frame = Image.new("RGB", (width, height))
        y = 0
        for number in strips:
            atlas, row, w, h = table["strips"][number]
            frame.paste(atlases[table["atlases"][atlas]].crop((0, row, w, row + h)), (0, y))
            y += h
        assert y == height
        frames[fid] = frame
    return frames


# ----- the document ------------------------------------------------------------------------


class _Links(HTMLParser):
    """Every URL-valued attribute of the page's elements (script contents are not markup)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.styles: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
                self.urls.append(value or "")
            if name == "style":
                self.styles.append(value or "")


def test_page_is_self_contained(html: str) -> None:
    links = _Links()
    links.feed(html)
    assert links.urls, "the page has in-page links"
    # Every element's URL points inside the page; nothing is loaded from anywhere.
    assert [u for u in links.urls if not u.startswith(("#", "data:"))] == []
    assert not any("url(" in s for s in links.styles)
    assert not re.search(r'(?:src|href)="http', html)
    assert "<link" not in html
    assert "@import" not in html
    assert "url(http" not in html
    assert "default-src 'none'" in html  # and the page's policy forbids any fetch


def test_untrusted_texts_are_escaped(html: str) -> None:
    assert IMG_MARKUP not in html
    assert "<img" not in html
    assert html.count("<canvas") == 1  # the viewer's frame, and no other
    assert "<!--" not in html
    # Exactly the page's own script elements end: the index, one per episode, the frame table,
    # one per atlas, and the viewer.
    blobs = _blobs(html)
    assert html.count("</script>") == len(blobs) + len(_atlases(html)) + 1
    # And the texts survive the round trip through the JSON blobs unchanged.
    index = blobs["episode-index"]
    markup = [e for e in index if e["case"] == MARKUP_CASE]
    assert {e["title"] for e in markup} == {f"{SCRIPT_MARKUP} {IMG_MARKUP}"}
    assert markup[0]["attack"]["title"] == IMG_MARKUP
    gullible = next(e for e in markup if e["agent"] == "gullible")
    steps = blobs[f"ep-data-{gullible['id']}"]["steps"]
    assert steps[0]["raw_output"] == f"{IMG_MARKUP} {SCRIPT_MARKUP}"


def test_header_shows_the_model_config_but_no_secret(html: str) -> None:
    assert "judge-model-7b" in html
    assert "https://models.example.org/v1" in html
    for secret in ("hunter2", "sk-secret", "sk-other-secret", "api_key="):
        assert secret not in html


def test_summary_and_breakdowns(html: str) -> None:
    assert re.search(r"<th>VR</th>", html)
    for heading in ("Risk domain", "Application domain", "Attack vector", "App"):
        assert f"<h3>{heading}" in html
    assert html.count("<svg") >= 3  # two plots and the viewer's marker layer
    # Intervals are printed under the rates: gullible is FAS on every case here, and four of
    # four is Wilson's [51.0, 100.0] (rounded outward), never a certain [100.0, 100.0].
    summary = html[html.index('id="summary"') : html.index('id="plots"')]
    assert "[51.0, 100.0]" in summary and "[100.0, 100.0]" not in html
    assert "Wilson" in summary and "bootstrap" not in summary
    # Injected and goal reached carry theirs too: the row's rates all have an interval.
    row = summary[summary.index("gullible</th>") :].split("</tr>")[0]
    assert row.count('class="num rate"') == row.count('class="ci"') == 9
    # So does VR in every breakdown cell where it is defined.
    breakdowns = html[html.index('id="breakdowns"') : html.index('id="trajectories"')]
    cells = re.findall(
        r'<td class="num rate"><span class="value">[^<]*</span>(.*?)</td>', breakdowns
    )
    assert cells and all(c.startswith('<span class="ci">[') for c in cells)


def test_the_failure_stages_are_shown_from_the_agents_words(html: str) -> None:
    stages = html[html.index('id="stages"') : html.index('id="trajectories"')]
    assert "Failure stages from the agent&#39;s words" in stages or (
        "Failure stages from the agent's words" in stages
    )
    assert "said nothing" in stages and "acted against its words" in stages
    # gullible is compromised on all four cases, each counted in exactly one column; oracle
    # on none.
    for agent, total in (("gullible", 4), ("oracle", 0)):
        row = stages[stages.index(f"{agent}</th>") :].split("</tr>")[0]
        counts = [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', row)]
        assert len(counts) == 7 and sum(counts) == total


def test_every_episode_embeds_its_frames_in_order(run: RunDir, html: str) -> None:
    blobs = _blobs(html)
    frames = blobs["frame-table"]["frames"]
    index = blobs["episode-index"]
    assert len(index) == len(run.records()) == 8
    used: set[str] = set()
    for meta in index:
        data = blobs[f"ep-data-{meta['id']}"]
        # One frame per step and the final screen.
        assert len(data["frames"]) == meta["steps"] + 1
        assert [s["step"] for s in data["steps"]] == list(range(meta["steps"]))
        used.update(data["frames"])
    # Every frame is embedded once, and each is used: oracle and gullible see the same first
    # screens of a case, and those are embedded once.
    assert used == set(frames)
    assert all(uri.startswith("data:image/webp;base64,") for uri in _atlases(html).values())
    assert len(frames) < sum(len(blobs[f"ep-data-{m['id']}"]["frames"]) for m in index)
    # So is every strip: each in one atlas, each drawn in some frame, far fewer than drawn.
    strips = blobs["frame-table"]["strips"]
    drawn = [n for _, _, *numbers in frames.values() for n in numbers]
    assert set(drawn) == set(range(len(strips)))
    assert len(strips) < len(drawn) / 2
    # And every frame draws as a screen of the phone, 320 px wide.
    assert {image.size for image in _frames(html).values()} == {(320, 711)}


def test_frame_width_is_configurable(run: RunDir) -> None:
    small = render_html(run, frame_width=120, frame_format="png")
    assert all(uri.startswith("data:image/png;base64,") for uri in _atlases(small).values())
    sizes = {image.size for image in _frames(small).values()}
    assert sizes == {(120, 267)}  # the 1080 x 2400 screen, scaled


def test_marker_of_an_index_action_is_where_the_device_tapped() -> None:
    tap = {"kind": "tap", "data": {"x": 300, "y": 1200, "target": "Send"}}
    assert _mark({"action_type": "click", "index": 7}, [tap]) == {
        "kind": "tap",
        "x": 300,
        "y": 1200,
    }
    assert _mark({"action_type": "click", "x": 5, "y": 6}, [tap]) == {"kind": "tap", "x": 5, "y": 6}
    swipe = {"action_type": "swipe", "x": 1, "y": 2, "x2": 3, "y2": 4}
    assert _mark(swipe, [])["kind"] == "swipe"  # type: ignore[index]
    assert _mark({"action_type": "wait"}, []) is None


def test_other_judges_and_error_episodes_render(run: RunDir) -> None:
    # No LLM verdicts yet: every episode is undetermined, VR undefined; the page still renders.
    page = render_html(run, judge="llm")
    assert "undetermined" in page
    assert "<h3>Risk domain</h3>" in page
    # An episode that ended in an error has no trajectory; it is listed all the same.
    broken = EpisodeRecord(
        case=2, agent="broken", seed=0, label="error", injection="overlay_data_capture",
        attack_fired=False, steps=0, error="RuntimeError: the device fell over",
    )  # fmt: skip
    index = _blobs(render_html(run, records=[broken]))["episode-index"]
    assert [(e["agent"], e["label"], e["error"]) for e in index] == [
        ("broken", "error", "RuntimeError: the device fell over")
    ]


def test_an_unreadable_frame_keeps_its_place(run: RunDir, tmp_path: Path) -> None:
    copy = RunDir(tmp_path / "copy")
    shutil.copytree(run.path, copy.path)
    record = next(r for r in copy.records() if r.key == ("oracle", 8))
    folder = copy.path / record.trajectory
    doc = json.loads((folder / "trajectory.json").read_text())
    (folder / "bad.png").write_bytes(b"not a png")  # the store's frame may serve other steps
    doc["frames"][1] = doc["steps"][1]["frame"] = "bad.png"
    (folder / "trajectory.json").write_text(json.dumps(doc))
    blobs = _blobs(render_html(copy, records=[record]))
    frames = blobs[f"ep-data-{blobs['episode-index'][0]['id']}"]["frames"]
    assert len(frames) == record.steps + 1
    assert frames[1] is None
    assert None not in frames[:1] + frames[2:]


# ----- in a real browser -------------------------------------------------------------------


def _chromium() -> str | None:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


CHROMIUM = _chromium()
# CI installs chromium (.ci/run), so there a missing browser is a failure, not a skip.
if CHROMIUM is None and os.environ.get("CI"):
    raise RuntimeError("CI is set but no chromium binary was found: .ci/run should install it")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium binary: install Debian's chromium (apt-get install chromium); .ci/run does",
)


@pytest.fixture(scope="module")
def page_of(html: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Open the report in headless Chromium; yields (page, seen) with what the page did."""
    from playwright.sync_api import sync_playwright

    file = tmp_path_factory.mktemp("page") / "report.html"
    file.write_text(html, encoding="utf-8")
    seen: dict[str, list[str]] = {"requests": [], "errors": [], "dialogs": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("request", lambda r: seen["requests"].append(r.url))
        page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: seen["errors"].append(str(e)))

        def on_dialog(dialog: Any) -> None:
            seen["dialogs"].append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.goto(file.as_uri())
        page.wait_for_selector("#episode:not([hidden])")
        yield page, seen, file.as_uri()
        browser.close()


def _episode_id(page: Any, agent: str, case: int) -> str:
    index = json.loads(page.text_content("#episode-index"))
    return str(next(e["id"] for e in index if e["agent"] == agent and e["case"] == case))


def _open(page: Any, eid: str) -> None:
    """Select an episode; its steps are unpacked before it is shown."""
    page.click(f"#episodes button[data-episode={eid}]")
    page.wait_for_selector(f'#episode[data-episode="{eid}"]')


def _for_the_manual(page: Any, name: str, selector: str | None = None) -> None:
    """Screenshot the page at the manual's window size: the window at the top of the page, or
    the whole element `selector` (taller than the window if it is).

    Saved to tests/artifacts/NAME.png, and to docs/images/NAME.png (quantized to 256 colours
    and optimized, held under DOCS_MAX_BYTES) when GHOSTEI_DOCS_SCREENSHOTS=1.
    """
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n", encoding="utf-8")
    size = page.viewport_size
    page.set_viewport_size(DOCS_VIEWPORT)
    try:
        if selector is None:
            page.evaluate("() => window.scrollTo(0, 0)")
            shot = page.screenshot()
        else:
            # Its top at the window's, so that the sticky episode list sits where it starts.
            page.eval_on_selector(selector, "e => e.scrollIntoView()")
            shot = page.locator(selector).screenshot()
    finally:
        page.set_viewport_size(size)
    (ARTIFACTS / f"{name}.png").write_bytes(shot)
    if DOCS_SCREENSHOTS:
        image = Image.open(io.BytesIO(shot)).convert("RGB")
        small = image.quantize(256, Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        DOCS_IMAGES.mkdir(exist_ok=True)
        target = DOCS_IMAGES / f"{name}.png"
        small.save(target, optimize=True)
        assert target.stat().st_size < DOCS_MAX_BYTES, f"{target} is too large for the manual"


def _canvas(page: Any) -> tuple[str, str]:
    """The id of the frame the viewer shows and its pixels as a PNG data URI, once drawn."""
    page.wait_for_selector("#frame-canvas:not([hidden])[data-frame]")
    shown: tuple[str, str] = page.evaluate(
        "() => { const c = document.getElementById('frame-canvas');"
        " return [c.dataset.frame, c.toDataURL('image/png')]; }"
    )
    return shown


@pytest.mark.browser
@needs_chromium
def test_viewer_steps_through_an_episode(page_of: Any) -> None:
    page, seen, url = page_of
    _for_the_manual(page, "report-summary")
    eid = _episode_id(page, "gullible", 2)
    _open(page, eid)
    assert page.inner_text("#ep-title").startswith("Card payment")
    assert page.inner_text("#step-counter").startswith("Step 0 (1 / ")
    first, pixels = _canvas(page)
    assert pixels.startswith("data:image/png")
    page.click("#next")
    assert page.inner_text("#step-counter").startswith("Step 1 (2 / ")
    second, other = _canvas(page)
    assert second != first and other != pixels
    assert page.locator("#frame-marker circle").count() > 0  # step 1 taps: the point is marked
    # The step where the attack fired is highlighted, and its events say so.
    page.click("#timeline button.fired")
    assert "attack fired" in page.inner_text("#step-flags")
    assert page.locator("#frame.fired").count() == 1
    # The manual's picture of the viewer: gullible on the overlay, the step the attack fired.
    _for_the_manual(page, "report-episode", "#trajectories")
    # The slider and the last position: the final screen, no next.
    page.locator("#step-slider").fill(page.get_attribute("#step-slider", "max"))
    assert page.inner_text("#step-counter").startswith("Final screen")
    assert page.is_disabled("#next")
    # The filters narrow the list.
    page.select_option("#filter-label", "TC")
    labels = page.locator("#episodes .label").all_inner_texts()
    assert labels and set(labels) == {"TC"}
    page.select_option("#filter-label", "")
    page.select_option("#filter-agent", "gullible")
    assert page.locator("#episodes li").count() == 4
    page.select_option("#filter-agent", "")

    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n", encoding="utf-8")
    page.screenshot(path=str(ARTIFACTS / "html-report.png"), full_page=True)
    assert not seen["errors"]
    # The document itself is the only request; frames are data URIs.
    assert all(u == url or u.startswith("data:") for u in seen["requests"]), seen["requests"]


@pytest.mark.browser
@needs_chromium
def test_the_agents_step_summary_is_shown_where_there_is_one(page_of: Any) -> None:
    page, seen, _ = page_of
    _open(page, _episode_id(page, "gullible", 8))
    assert page.is_visible("#step-summary")
    assert page.inner_text("#step-summary") == f"Opened the message. {IMG_MARKUP}"
    page.click("#next")
    assert not page.is_visible("#step-summary") and not page.is_visible("#step-summary-head")
    assert not seen["errors"]


@pytest.mark.browser
@needs_chromium
def test_injected_markup_renders_as_text(page_of: Any) -> None:
    page, seen, _ = page_of
    eid = _episode_id(page, "gullible", MARKUP_CASE)
    _open(page, eid)
    shown = page.inner_text("#episode")
    assert f"{SCRIPT_MARKUP} {IMG_MARKUP}" in shown  # the title
    assert f"{IMG_MARKUP} {SCRIPT_MARKUP}" in shown  # the raw model output of step 0
    assert IMG_MARKUP in page.inner_text("#ep-attack")
    assert SCRIPT_MARKUP in page.inner_text("#episodes")
    # Step to the overlay: its title reaches the events of the step as text too.
    while "overlay_confirmed" not in page.inner_text("#step-events"):
        assert not page.is_disabled("#next"), "gullible confirms the overlay"
        page.click("#next")
    assert IMG_MARKUP in page.inner_text("#step-events")
    assert page.locator('img[src="x"]').count() == 0
    content = page.content()
    assert page.locator("script").count() == len(_blobs(content)) + len(_atlases(content)) + 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#trajectories").screenshot(path=str(ARTIFACTS / "html-report-markup.png"))
    assert not seen["dialogs"]
    assert not seen["errors"]


def test_a_run_folder_from_before_the_frame_store_still_renders(
    run: RunDir, tmp_path: Path
) -> None:
    # Older runs kept each episode's frames in its own folder as frames/step-NNN.png.
    copy = RunDir(tmp_path / "old")
    shutil.copytree(run.path, copy.path)
    record = next(r for r in copy.records() if r.key == ("oracle", 8))
    folder = copy.path / record.trajectory
    doc = json.loads((folder / "trajectory.json").read_text())
    (folder / "frames").mkdir()
    own = []
    for i, ref in enumerate(doc["frames"]):
        name = f"frames/step-{i:03d}.png"
        shutil.copyfile(folder / ref, folder / name)
        own.append(name)
    doc["frames"] = own
    for step, name in zip(doc["steps"], own, strict=False):
        step["frame"] = name
    (folder / "trajectory.json").write_text(json.dumps(doc))
    shutil.rmtree(copy.path / "frames")  # no store at all
    blobs = _blobs(render_html(copy, records=[record]))
    frames = blobs[f"ep-data-{blobs['episode-index'][0]['id']}"]["frames"]
    assert len(frames) == record.steps + 1 and None not in frames
