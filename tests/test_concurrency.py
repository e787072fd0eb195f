"""Episodes in flight at once: latency overlaps, 429s slow every episode, clients are reused,
and results do not depend on --workers or --concurrency."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ghostei.cases import builtin_cases
from ghostei.cli import main
from ghostei.executors import local
from ghostei.executors.local import execute
from ghostei.providers import (
    Completion,
    Message,
    ProviderConfig,
    ProviderError,
    RetryingProvider,
    build_provider,
)
from ghostei.providers.clients import clear_clients
from ghostei.providers.ratelimit import RateLimiter, limiter_for
from ghostei.rundir import EpisodeRecord, RunDir
from ghostei.runner import RunConfig, new_manifest

from .llm_server import RecordedRequest, Reply, ScriptedLLM, uitars_episode_reply

CASES = builtin_cases()


def episodes_here(monkeypatch: pytest.MonkeyPatch, workers: int) -> list[Any]:
    """Make the run wait for its worker processes before any episode starts (it does not,
    and runs in itself the episodes of a worker still starting), so that every process gets
    its share; returns the list of the episodes this process ran."""
    here: list[Any] = []
    if workers <= 1:
        return here
    enter, run_here = local._EpisodeWorkers.__enter__, local._worker

    def enter_and_wait(self: Any) -> Any:
        pool = enter(self)
        for started in pool._runners:
            started.result()
        return pool

    def counted(job: Any) -> Any:
        here.append(job)
        return run_here(job)

    monkeypatch.setattr(local._EpisodeWorkers, "__enter__", enter_and_wait)
    monkeypatch.setattr(local, "_worker", counted)
    return here


def model_run(
    tmp_path: Path,
    name: str,
    llm: ScriptedLLM,
    cases: int,
    *,
    workers: int = 1,
    concurrency: int = 1,
    **model: Any,
) -> tuple[list[EpisodeRecord], float]:
    """``cases`` UI-TARS episodes on a small screen (the CPU per step is not what is timed)."""
    model.setdefault("backoff_cap", 5.0)
    config = RunConfig(
        agents=("uitars",),
        frames="none",
        model=llm.provider_config(**model),
        max_steps=6,
        width=360,
        height=800,
    )
    run = RunDir(tmp_path / name)
    run.create(new_manifest(config, CASES[:cases]), CASES[:cases])
    started = time.perf_counter()
    records = execute(run, config, CASES[:cases], workers=workers, concurrency=concurrency)
    elapsed = time.perf_counter() - started
    assert [r.error for r in records] == [None] * cases
    assert {r.steps for r in records} == {3}
    return records, elapsed


# -- latency ---------------------------------------------------------------------------------


def _peak_in_flight(llm: ScriptedLLM, since: int) -> int:
    """The most requests the server held at once, of those from the ``since``-th on."""
    asked = llm.requests[since:]
    moments = [(r.received, 1) for r in asked]
    moments += [(at, -1) for at, _ in llm.answered if at >= asked[0].received]
    peak = held = 0
    for _, change in sorted(moments):  # an answer before a request at the same moment
        held += change
        peak = max(peak, held)
    return peak


def test_episodes_in_flight_together_wait_on_the_model_together(tmp_path: Path) -> None:
    """With ``concurrency`` n, the episodes' requests wait on the model at once (the run
    takes about one episode's time, not n: benchmarks/bench_concurrency.py measures it)."""
    n = 4
    with ScriptedLLM(latency=0.2) as llm:
        llm.respond(uitars_episode_reply)
        model_run(tmp_path, "one", llm, n, concurrency=1)
        alone = _peak_in_flight(llm, 0)
        first = len(llm.requests)
        records, _ = model_run(tmp_path, "all", llm, n, concurrency=n)
        together = _peak_in_flight(llm, first)
    assert len(llm.requests) == 2 * 3 * n
    assert alone == 1
    assert together >= 2  # all n when nothing else slows the machine down
    assert sorted(r.case for r in records) == [c.id for c in CASES[:n]]


# -- shared rate limits ----------------------------------------------------------------------


def first_request_429(retry_after: float, latency: float) -> Any:
    """A responder: the first request of all gets a 429 with Retry-After at once, the others
    their answers after ``latency``."""
    lock = threading.Lock()
    seen = [0]

    def reply(request: RecordedRequest) -> Reply:
        with lock:
            seen[0] += 1
            first = seen[0] == 1
        if first:
            return Reply.error(429, retry_after=retry_after)
        return Reply(text=uitars_episode_reply(request), delay=latency)

    return reply


def instruction(request: RecordedRequest) -> str:
    """Which episode sent the request: its case's instruction, in the prompt."""
    (prompt,) = [t for t in request.texts("user") if "## User Instruction" in t]
    return prompt.split("## User Instruction", 1)[1]


@pytest.mark.parametrize("workers", [1, 2], ids=["threads", "processes"])
def test_a_429_holds_back_every_episode_in_flight(
    tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    retry_after, latency = 0.8, 0.3
    here = episodes_here(monkeypatch, workers)
    with ScriptedLLM() as llm:
        llm.respond(first_request_429(retry_after, latency))
        model_run(tmp_path, "run", llm, 4, workers=workers, concurrency=4, backoff_base=0.001)
    if workers > 1:
        assert len(here) == 2  # and the other two in the worker process
    (answered_429,) = [t for t, status in llm.answered if status == 429]
    # The other episodes' first requests were in flight when the 429 came back; none of
    # their answers came back sooner than ``latency`` after it. Until then only first
    # requests may arrive (sent before the 429 was read). Every request after that waited
    # out the Retry-After: the retry of the episode that got the 429, and the others' next
    # requests (in the other worker process too), which would have gone at once.
    soon = [r for r in llm.requests if answered_429 < r.received < answered_429 + 0.25]
    held = [r for r in llm.requests if r.received >= answered_429 + 0.25]
    assert all(r.turns("assistant") == 0 for r in soon)
    assert held, "no request after the 429"
    assert min(r.received for r in held) >= answered_429 + retry_after
    assert len({instruction(r) for r in held}) == 4  # all four episodes were held back
    assert len(llm.requests) == 4 * 3 + 1


class Busy:
    """A provider that answers 429 (with ``retry_after``) ``failures`` times, then answers."""

    def __init__(
        self, config: ProviderConfig, retry_after: float | None = None, failures: int = 1
    ) -> None:
        self.config = config
        self.retry_after = retry_after
        self.failures = failures

    def complete(self, messages: Sequence[Message]) -> Completion:
        if self.failures:
            self.failures -= 1
            raise ProviderError("busy", status=429, retryable=True, retry_after=self.retry_after)
        return Completion("ok")


class FakeTime:
    """A clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


@pytest.mark.parametrize("retry_after", [4.0, None])
def test_a_429_delays_the_next_request_of_another_provider(retry_after: float | None) -> None:
    # Two episodes' providers of one endpoint share its limiter: the 429 one of them gets
    # (with or without a Retry-After) keeps the other's next request back just as long.
    config = ProviderConfig(model="m", backoff_base=2.0, backoff_cap=30.0)
    fake = FakeTime()
    limiter = RateLimiter(clock=fake.clock, sleep=fake.sleep)
    own = FakeTime()  # the retrying provider's own backoff sleep, kept apart
    hit = RetryingProvider(
        Busy(config, retry_after), sleep=own.sleep, rng=random.Random(0), limiter=limiter
    )
    other = RetryingProvider(Busy(config, failures=0), sleep=own.sleep, limiter=limiter)

    assert hit.complete([Message("user", "hi")]).text == "ok"
    (backoff,) = own.slept
    if retry_after is not None:
        assert backoff == retry_after
    else:
        assert 1.0 <= backoff <= 2.0  # equal jitter of the first 2 s backoff
    assert fake.slept == []  # the provider that got the 429 waited its own backoff once
    assert other.complete([Message("user", "hi")]).text == "ok"
    assert fake.slept == [backoff]  # the other waited the same backoff before its request
    assert other.complete([Message("user", "again")]).text == "ok"
    assert fake.slept == [backoff]  # and only once


def test_only_429_holds_back_the_others() -> None:
    fake = FakeTime()
    limiter = RateLimiter(clock=fake.clock, sleep=fake.sleep)
    config = ProviderConfig(model="m", backoff_base=1.0)

    class Flaky(Busy):
        def complete(self, messages: Sequence[Message]) -> Completion:
            if self.failures:
                self.failures -= 1
                raise ProviderError("upstream", status=503, retryable=True)
            return Completion("ok")

    RetryingProvider(Flaky(config), sleep=lambda s: None, limiter=limiter).complete([])
    assert limiter.not_before() == 0.0 and fake.slept == []


def test_limiter_holds_the_longest_and_waits_for_a_later_hold() -> None:
    fake = FakeTime()
    limiter = RateLimiter(clock=fake.clock, sleep=fake.sleep)
    assert limiter.wait() == 0.0
    until = limiter.hold(5.0)
    assert limiter.hold(1.0) == until == 1005.0  # a shorter hold never shortens one
    assert limiter.wait(waited_until=until) == 0.0  # the caller slept through it already
    assert limiter.wait() == 5.0 and fake.now == 1005.0
    assert limiter.wait() == 0.0


def test_providers_of_one_endpoint_share_a_limiter_and_injected_time_opts_out() -> None:
    config = ProviderConfig(model="m", base_url="http://127.0.0.1:9/v1")
    assert limiter_for(config) is limiter_for(ProviderConfig(model="n", base_url=config.base_url))
    assert limiter_for(config) is not limiter_for(ProviderConfig(model="m", base_url="http://x"))
    shared = build_provider(config)
    assert isinstance(shared, RetryingProvider) and shared.limiter is limiter_for(config)
    private = build_provider(config, sleep=lambda s: None)
    assert isinstance(private, RetryingProvider) and private.limiter is None


# -- clients ---------------------------------------------------------------------------------


def test_one_client_per_process_for_many_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openai

    built: list[object] = []
    real = openai.OpenAI

    def counting(*args: Any, **kwargs: Any) -> Any:
        client = real(*args, **kwargs)
        built.append(client)
        return client

    monkeypatch.setattr(openai, "OpenAI", counting)
    clear_clients()
    with ScriptedLLM() as llm:
        llm.respond(uitars_episode_reply)
        model_run(tmp_path, "one", llm, 3, concurrency=1)
        model_run(tmp_path, "all", llm, 3, concurrency=3)
        assert len(built) == 1  # six episodes, 18 requests, one client
        build_provider(llm.provider_config(timeout=9.0))  # another configuration: its own
        assert len(built) == 2
        monkeypatch.setenv("GHOSTEI_SCRIPTED_LLM_KEY", "another-key")  # and another key
        build_provider(llm.provider_config())
        assert len(built) == 3


# -- determinism -----------------------------------------------------------------------------


def snapshot(out: Path) -> dict[str, Any]:
    """Everything an episode leaves, minus timings: records, trajectories (with their frame
    references), events, and which frames and dumps the store holds."""
    records = {}
    for line in (out / "episodes.jsonl").read_text().splitlines():
        record = json.loads(line)
        record.pop("seconds")
        records[(record["agent"], record["case"])] = record
    files = {
        str(p.relative_to(out)): p.read_text()
        for p in sorted((out / "episodes").rglob("*"))
        if p.is_file()
    }
    frames = sorted(str(p.relative_to(out)) for p in (out / "frames").rglob("*") if p.is_file())
    return {"records": records, "files": files, "frames": frames}


def test_results_are_the_same_whatever_the_concurrency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Scripted agents on the simulator, frames saved: eight episodes at once, in threads of
    # one process and in threads of two, share fonts, the compositor's caches and the frame
    # store; the outcome must be the sequential run's, byte for byte.
    def run(name: str, workers: int, concurrency: int) -> dict[str, Any]:
        out = tmp_path / name
        result = CliRunner().invoke(
            main,
            [
                *("run", "--cases", "1-10", "--out", str(out), "--screen", "540x1200"),
                *("--agent", "oracle", "--agent", "gullible", "--agent", "random"),
                *("--frames", "all", "--workers", str(workers)),
                *("--concurrency", str(concurrency)),
            ],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        return snapshot(out)

    sequential = run("c1", 1, 1)
    assert len(sequential["records"]) == 30 and sequential["frames"]
    assert run("c8", 1, 8) == sequential
    here = episodes_here(monkeypatch, 2)
    assert run("w2c8", 2, 8) == sequential
    assert 0 < len(here) < 30  # some ran in the worker process


def test_shared_fonts_draw_the_same_text_from_many_threads_at_once() -> None:
    # The renderer keeps one FreeTypeFont per size and weight for the whole process. Pillow
    # renders with the GIL held (its C code never releases it, and on free-threaded builds a
    # critical section locks the font), so threads share the fonts safely: text drawn by
    # eight threads at once is the text drawn by one.
    from PIL import Image, ImageDraw

    from ghostei.sim.render import font

    labels = [f"Pay {n} x {chr(0x41 + n % 26)} — Ünïcødé {n * 7}" for n in range(40)]
    sizes = [(28, 400), (37, 600), (44, 700), (30, 400)]

    def draw_all() -> list[bytes]:
        out = []
        for i, label in enumerate(labels * 3):
            size, weight = sizes[i % len(sizes)]
            image = Image.new("L", (900, 80), 0)
            ImageDraw.Draw(image).text((3.5, 7.25), label, font=font(size, weight), fill=255)
            out.append(image.tobytes())
        return out

    expected = draw_all()
    results: list[list[bytes]] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        results.append(draw_all())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and all(r == expected for r in results)


# -- the command line ------------------------------------------------------------------------


def test_concurrency_must_be_at_least_one(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["run", "--cases", "1", "--out", str(tmp_path / "r"), "--concurrency", "0"]
    )
    assert result.exit_code == 2
    assert "--concurrency" in result.output and "0 is not in the range x>=1" in result.output
    assert not (tmp_path / "r").exists()


def test_execute_rejects_nonsense_numbers(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r")
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        execute(run, RunConfig(), [], workers=2, concurrency=0)
    with pytest.raises(ValueError, match="workers must be at least 1"):
        execute(run, RunConfig(), [], workers=0)
