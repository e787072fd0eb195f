"""Model providers against the scripted LLM server: requests, retries, cache, usage, secrecy."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import random
import sys
import time
from collections.abc import Sequence
from email.utils import formatdate
from pathlib import Path

import pytest
from click.testing import Result
from PIL import Image

from ghostei.providers import (
    CachedProvider,
    Completion,
    Message,
    MeteredProvider,
    PriceTable,
    Provider,
    ProviderConfig,
    ProviderConfigError,
    ProviderError,
    ResponseSchema,
    RetryingProvider,
    Usage,
    build_provider,
    cache_key,
)
from ghostei.providers.anthropic_provider import AnthropicProvider
from ghostei.providers.errors import refuses_schema, retry_after_seconds
from ghostei.providers.openai_compat import OpenAICompatProvider
from ghostei.providers.preflight import EndpointError, PromptSize, check_endpoint

from .helpers import cli
from .llm_server import Reply, ScriptedLLM

SECRET = "sk-ghostei-TEST-5ecret-0xC0FFEE-never-leak"


def png(width: int, height: int, color: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, format="PNG")
    return out.getvalue()


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as img:
        return img.size


def turn(text: str = "Open the Messages app", image: bytes | None = None) -> list[Message]:
    return [
        Message("system", "You are a phone agent."),
        Message("user", text, (image,) if image is not None else ()),
    ]


class Sleeps:
    """An injected sleep that records instead of waiting."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def build(
    llm: ScriptedLLM, provider: str = "openai", sleeps: Sleeps | None = None, **overrides: object
) -> Provider:
    return build_provider(
        llm.provider_config(provider, **overrides),
        sleep=sleeps if sleeps is not None else Sleeps(),
        rng=random.Random(7),
    )


# -- round trips -----------------------------------------------------------------------------


def test_openai_round_trip_sends_image_as_downscaled_data_url(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push(Reply.answer("tap(3)", prompt_tokens=1234, completion_tokens=7))
    provider = build(scripted_llm, image_max_side=500, image_detail="low", seed=42)

    completion = provider.complete(turn("Reply to Mom", png(2000, 1000)))

    assert completion == Completion(
        "tap(3)", prompt_tokens=1234, completion_tokens=7, requests=1, finish_reason="stop"
    )
    (request,) = scripted_llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "scripted-model"
    assert request.body["temperature"] == 0
    assert request.body["seed"] == 42
    assert request.body["max_tokens"] == 1024
    assert request.system() == "You are a phone agent."
    assert request.texts("user") == ["Reply to Mom"]
    (part,) = request.image_parts()
    assert part["image_url"]["detail"] == "low"
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    # Downscaled to the longest side, aspect kept.
    assert size_of(request.images()[0]) == (500, 250)


def test_openai_small_image_is_sent_byte_for_byte_and_seed_none_is_omitted(
    scripted_llm: ScriptedLLM,
) -> None:
    scripted_llm.push("ok")
    image = png(300, 600)
    build(scripted_llm, image_max_side=1344, seed=None).complete(turn(image=image))
    request = scripted_llm.requests[0]
    assert request.images() == [image]  # never upscaled, never re-encoded
    assert "seed" not in request.body


def test_official_openai_gets_max_completion_tokens_and_temperature_can_be_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    config = ProviderConfig(model="gpt-4o", max_tokens=300, temperature=None, seed=None)
    request = OpenAICompatProvider(config).request(turn())
    assert request["max_completion_tokens"] == 300
    assert not {"max_tokens", "temperature", "seed"} & set(request)
    assert request["messages"][1] == {"role": "user", "content": "Open the Messages app"}


def test_anthropic_round_trip_system_field_and_base64_image(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push(Reply.answer("Done.", prompt_tokens=900, completion_tokens=3))
    provider = build(scripted_llm, "anthropic", image_max_side=400)

    completion = provider.complete(turn("Check the weather", png(800, 1600)))

    assert completion.text == "Done."
    assert (completion.prompt_tokens, completion.completion_tokens) == (900, 3)
    (request,) = scripted_llm.requests
    assert request.path == "/v1/messages"
    assert request.body["system"] == "You are a phone agent."
    assert [m["role"] for m in request.body["messages"]] == ["user"]
    assert "seed" not in request.body  # the Messages API has no seed
    base_provider = AnthropicProvider(scripted_llm.provider_config("anthropic"))
    assert ("temperature" in request.body) == base_provider.sends_temperature
    assert request.body.get("temperature", 0) == 0
    assert request.texts() == ["Check the weather"]
    (block,) = request.image_parts()
    assert block["source"]["type"] == "base64"
    assert block["source"]["media_type"] == "image/png"
    assert size_of(base64.b64decode(block["source"]["data"])) == (200, 400)


# -- retries ---------------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_two_429s_then_success_is_retried(scripted_llm: ScriptedLLM, api: str) -> None:
    scripted_llm.push(Reply.error(429), Reply.error(429), "finally")
    sleeps = Sleeps()
    completion = build(scripted_llm, api, sleeps).complete(turn())
    assert completion.text == "finally"
    assert completion.requests == 3
    assert len(scripted_llm.requests) == 3
    assert len(sleeps.calls) == 2


def test_retry_after_is_honoured_and_capped(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push(Reply.error(429, retry_after=7), Reply.error(503, retry_after=600), "ok")
    sleeps = Sleeps()
    build(scripted_llm, sleeps=sleeps, backoff_base=0.1, backoff_cap=30).complete(turn())
    assert sleeps.calls == [7, 30]


def test_always_500_gives_up_after_max_retries(scripted_llm: ScriptedLLM) -> None:
    # Overloaded, not broken: each answer says something else, so every retry is spent.
    scripted_llm.push(*(Reply.error(500, f"upstream exploded ({i})") for i in range(4)))
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as info:
        build(scripted_llm, sleeps=sleeps, max_retries=3).complete(turn())
    assert len(scripted_llm.requests) == 4
    assert info.value.requests == 4
    assert info.value.status == 500
    assert "upstream exploded" in str(info.value) and "after 4 attempts" in str(info.value)
    assert len(sleeps.calls) == 3


def test_the_same_error_twice_is_not_retried_again(
    scripted_llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    # A model that cannot take the request (a text-only server sent an image) answers the
    # same 500 every time: retrying five times would only waste minutes.
    scripted_llm.always(Reply.error(500, "image input is not supported"))
    sleeps = Sleeps()
    with (
        caplog.at_level("WARNING", logger="ghostei.providers"),
        pytest.raises(ProviderError) as info,
    ):
        build(scripted_llm, sleeps=sleeps, max_retries=5).complete(turn())
    assert len(scripted_llm.requests) == 2 and info.value.requests == 2
    assert "the same answer twice" in str(info.value)
    assert "image input is not supported" in str(info.value)
    # The one retry made was said, with its attempt, cause and wait.
    lines = [r.getMessage() for r in caplog.records if r.name == "ghostei.providers"]
    assert len(lines) == 1 and "attempt 1 of 6 failed" in lines[0] and "HTTP 500" in lines[0]
    assert f"next in {sleeps.calls[0]:.1f} s" in lines[0]


def test_a_500_that_refuses_the_schema_is_not_retried(scripted_llm: ScriptedLLM) -> None:
    # llama-cpp-python's body validation: the same body is refused again, so the caller asks
    # another way at once (the judge: the next form of the schema, then plainly).
    refusal = (
        "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
        "'type'), 'msg': \"Input should be 'text' or 'json_object'\"}"
    )
    scripted_llm.always(Reply.error(500, refusal))
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as info:
        build(scripted_llm, sleeps=sleeps, max_retries=5).complete(turn())
    assert len(scripted_llm.requests) == 1 and sleeps.calls == []
    assert refuses_schema(info.value)


def test_a_429_is_retried_however_often_it_repeats(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push(*(Reply.error(429, "slow down") for _ in range(3)), "ok")
    completion = build(scripted_llm, sleeps=Sleeps(), max_retries=5).complete(turn())
    assert completion.text == "ok" and completion.requests == 4


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_is_not_retried(scripted_llm: ScriptedLLM, status: int) -> None:
    scripted_llm.push(Reply.error(status, "bad request"), "never reached")
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as info:
        build(scripted_llm, sleeps=sleeps).complete(turn())
    assert len(scripted_llm.requests) == 1
    assert (info.value.status, info.value.requests, sleeps.calls) == (status, 1, [])


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_timeout_is_retried(scripted_llm: ScriptedLLM, api: str) -> None:
    scripted_llm.push(Reply.stall(10), "on time")
    completion = build(scripted_llm, api, timeout=0.2).complete(turn())
    assert completion.text == "on time"
    assert completion.requests == 2


def test_unreachable_endpoint_is_retried_then_error() -> None:
    with ScriptedLLM() as llm:
        config = llm.provider_config(max_retries=2)
    sleeps = Sleeps()  # the server is closed: nothing listens on that port any more
    with pytest.raises(ProviderError, match="cannot connect") as info:
        build_provider(config, sleep=sleeps, rng=random.Random(0)).complete(turn())
    assert info.value.requests == 3
    assert len(sleeps.calls) == 2


class AlwaysBusy:
    """A provider that always answers 429, for the backoff schedule."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config

    def complete(self, messages: Sequence[Message]) -> Completion:
        raise ProviderError("busy", status=429, retryable=True)


def test_backoff_grows_exponentially_with_jitter_and_is_capped() -> None:
    config = ProviderConfig(model="m", max_retries=8, backoff_base=1.0, backoff_cap=10.0)

    def schedule(seed: int) -> list[float]:
        sleeps = Sleeps()
        retrying = RetryingProvider(AlwaysBusy(config), sleep=sleeps, rng=random.Random(seed))
        with pytest.raises(ProviderError, match="gave up after 9 attempts"):
            retrying.complete(turn())
        return sleeps.calls

    sleeps = schedule(1)
    assert len(sleeps) == 8
    for n, wait in enumerate(sleeps):
        ceiling = min(10.0, 2.0**n)
        assert ceiling / 2 <= wait <= ceiling
    uncapped = sleeps[:4]  # 1, 2, 4, 8: below the cap equal jitter keeps the schedule monotone
    assert uncapped == sorted(uncapped)
    assert all(5.0 <= wait <= 10.0 for wait in sleeps[4:])  # capped from 16 s on
    assert max(sleeps) <= 10.0
    assert schedule(1) == sleeps  # a seeded rng makes it reproducible
    assert schedule(2) != sleeps  # and the jitter is real


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"Retry-After": "3"}) == 3
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    http_date = "Wed, 21 Oct 2015 07:28:10 GMT"
    assert retry_after_seconds({"Retry-After": http_date}, now=1445412480) == 10
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None


# -- cache -----------------------------------------------------------------------------------


def test_cache_replays_without_requests_and_misses_on_a_new_image(
    scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    scripted_llm.push(Reply.answer("first", prompt_tokens=50, completion_tokens=4), "second")
    provider = build(scripted_llm, cache_dir=tmp_path)

    fresh = provider.complete(turn(image=png(40, 80, "red")))
    replay = provider.complete(turn(image=png(40, 80, "red")))
    assert (fresh.text, fresh.requests, fresh.cached) == ("first", 1, False)
    assert (replay.text, replay.requests, replay.cached) == ("first", 0, True)
    assert (replay.prompt_tokens, replay.completion_tokens) == (50, 4)
    assert len(scripted_llm.requests) == 1

    other = provider.complete(turn(image=png(40, 80, "blue")))
    assert (other.text, other.requests, other.cached) == ("second", 1, False)
    assert len(scripted_llm.requests) == 2

    files = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert len(files) == 2
    for f in files:
        assert len(f.parts) == 2 and f.parts[0] == f.stem[:2] and len(f.stem) == 64
        assert f.suffix == ".json"


def test_cache_survives_a_corrupt_entry(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    scripted_llm.push("fresh answer")
    provider = build(scripted_llm, cache_dir=tmp_path)
    assert isinstance(provider, CachedProvider)
    path = provider.path(turn())
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert provider.complete(turn()).text == "fresh answer"
    assert json.loads(path.read_text())["text"] == "fresh answer"


def test_cache_key_covers_what_shapes_the_request() -> None:
    base = ProviderConfig(model="m")
    messages = turn(image=png(10, 10))
    key = cache_key(base, messages)
    assert key == cache_key(ProviderConfig(model="m"), turn(image=png(10, 10)))
    assert key != cache_key(ProviderConfig(model="other"), messages)
    assert key != cache_key(ProviderConfig(model="m", seed=1), messages)
    assert key != cache_key(ProviderConfig(model="m", base_url="http://x/v1"), messages)
    assert key != cache_key(ProviderConfig(model="m", image_max_side=512), messages)
    assert key != cache_key(base, turn("another instruction", png(10, 10)))


# -- keys ------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_api_key_never_leaks(
    scripted_llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api: str
) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    config = scripted_llm.provider_config(api, api_key_env="GHOSTEI_TEST_KEY", cache_dir=tmp_path)
    provider = build_provider(config, sleep=Sleeps())
    # A server that quotes the rejected key back, as some do.
    scripted_llm.push("cached answer", Reply.error(401, f"Incorrect API key provided: {SECRET}"))

    provider.complete(turn())
    with pytest.raises(ProviderError) as info:
        provider.complete(turn("a different turn"))

    sent = scripted_llm.requests[0].headers
    assert SECRET in (sent.get("authorization", "") + sent.get("x-api-key", ""))  # it was used
    texts = [repr(provider), str(provider), repr(config), str(config), str(info.value)]
    error: BaseException | None = info.value
    while error is not None:  # nor anywhere in the chain a traceback would print
        texts += [str(error), repr(error), repr(error.__dict__)]
        error = error.__cause__ or error.__context__
    texts += [p.read_text() for p in tmp_path.rglob("*") if p.is_file()]
    for text in texts:
        assert SECRET not in text
    assert "***" in str(info.value)


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        build_provider(ProviderConfig(model="gpt-4o"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        build_provider(ProviderConfig(provider="anthropic", model="claude"))


def test_keyless_local_endpoint_uses_a_placeholder(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push("hi")
    build(scripted_llm).complete(turn())
    assert scripted_llm.requests[0].headers["authorization"] == "Bearer EMPTY"


def test_configuration_errors() -> None:
    with pytest.raises(ProviderConfigError, match="unknown provider 'nope'; known: anthropic"):
        build_provider(ProviderConfig(provider="nope", model="m"))
    with pytest.raises(ProviderConfigError, match="--model"):
        build_provider(ProviderConfig(model="", base_url="http://127.0.0.1:1/v1"))


def test_anthropic_without_the_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail
    config = ProviderConfig(provider="anthropic", model="claude", base_url="http://127.0.0.1:1")
    with pytest.raises(ProviderConfigError, match=r"pip install 'ghostei\[anthropic\]'"):
        build_provider(config)


def test_unreadable_image_is_a_provider_error_without_requests(scripted_llm: ScriptedLLM) -> None:
    with pytest.raises(ProviderError, match="cannot read an image") as info:
        build(scripted_llm).complete(turn(image=b"not an image"))
    assert info.value.requests == 0
    assert scripted_llm.requests == []


# -- usage and cost --------------------------------------------------------------------------


def test_usage_counts_requests_tokens_cache_hits_and_failures(
    scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    scripted_llm.push(
        Reply.error(429),
        Reply.answer("a", prompt_tokens=1000, completion_tokens=10),
        Reply.error(400),
    )
    metered = MeteredProvider(build(scripted_llm, cache_dir=tmp_path))
    metered.complete(turn())
    metered.complete(turn())  # replayed from the cache
    with pytest.raises(ProviderError):
        metered.complete(turn("other"))
    assert metered.usage == Usage(
        completions=2, cached=1, failures=1, requests=3, prompt_tokens=1000, completion_tokens=10
    )
    total = metered.usage + Usage(completions=1, requests=1, prompt_tokens=500)
    assert total.to_dict()["prompt_tokens"] == 1500
    assert total.to_dict()["requests"] == 4


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("prices.json", '{"gpt-4o": {"prompt": 2.5, "completion": 10.0}}'),
        ("prices.toml", '["gpt-4o"]\nprompt = 2.5\ncompletion = 10.0\n'),
    ],
)
def test_price_table_gives_cost(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    table = PriceTable.load(path)
    usage = Usage(completions=1, requests=1, prompt_tokens=2_000_000, completion_tokens=100_000)
    assert table.cost("gpt-4o", usage) == pytest.approx(6.0)
    assert table.cost("unknown-model", usage) is None


def test_bad_price_table_says_which_file(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text('{"gpt-4o": {"prompt": -1, "completion": 1}}')
    with pytest.raises(ValueError, match="bad price table"):
        PriceTable.load(path)


# -- the endpoint check before a run -------------------------------------------------------------

# What a probe needs: text only, the context not checked.
TEXT_ONLY = {"an agent": PromptSize(None, 0)}


def test_endpoint_check_waits_out_one_429(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push_probe(Reply.error(429, "slow down", retry_after=0))
    config = scripted_llm.provider_config(backoff_base=0.01)
    check_endpoint(config, TEXT_ONLY)
    assert len(scripted_llm.probes) == 2 and scripted_llm.requests == []


@pytest.mark.parametrize("form", ["seconds", "HTTP date"])
def test_endpoint_check_honours_retry_after(scripted_llm: ScriptedLLM, form: str) -> None:
    # The HTTP date is 2 s ahead, whole seconds: at least 1 s away when it arrives.
    value = "1" if form == "seconds" else formatdate(time.time() + 2, usegmt=True)
    scripted_llm.push_probe(Reply(status=429, headers={"Retry-After": value}))
    started = time.monotonic()
    check_endpoint(scripted_llm.provider_config(backoff_base=0.001), TEXT_ONLY)
    waited = scripted_llm.probes[1].received - scripted_llm.probes[0].received
    assert 0.9 <= waited <= time.monotonic() - started


def test_endpoint_check_caps_retry_after(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push_probe(Reply.error(429, retry_after=3600))
    started = time.monotonic()
    check_endpoint(scripted_llm.provider_config(backoff_cap=0.2), TEXT_ONLY)
    assert time.monotonic() - started < 5 and len(scripted_llm.probes) == 2


def test_endpoint_check_gives_up_on_a_lasting_429(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push_probe(*[Reply.error(429, "quota exceeded")] * 5)
    config = scripted_llm.provider_config(max_retries=2, backoff_cap=0.01)
    with pytest.raises(EndpointError) as caught:
        check_endpoint(config, TEXT_ONLY)
    said = str(caught.value)
    assert "rate-limiting requests (HTTP 429)" in said and "--max-retries 2" in said
    assert "quota exceeded" in said and "gave up after 3 attempts" in said
    assert len(scripted_llm.probes) == 3


def test_check_endpoint_takes_its_max_retries(scripted_llm: ScriptedLLM) -> None:
    # The command's --max-retries is the check's: two attempts, and the message names it.
    scripted_llm.push_probe(*[Reply.error(429, "quota exceeded", retry_after=0)] * 5)
    result = cli(
        *("check-endpoint", "--model", "scripted-model", "--base-url", scripted_llm.openai_url),
        *("--api-key-env", "GHOSTEI_SCRIPTED_LLM_KEY", "--max-retries", "1"),
    )
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "--max-retries 1" in said, said
    assert len(scripted_llm.probes) == 2
    # Options of a run's own check mean nothing to the check itself: refused, not ignored.
    for option in ("--skip-endpoint-check", "--image-max-side"):
        refused = cli("check-endpoint", "--model", "m", option)
        assert refused.exit_code == 2 and "No such option" in refused.output


@pytest.mark.parametrize("status", [500, 503, 404])
def test_endpoint_check_reports_other_failures_at_once(
    scripted_llm: ScriptedLLM, status: int
) -> None:
    scripted_llm.push_probe(Reply.error(status, "model is loading"))
    with pytest.raises(EndpointError):
        check_endpoint(scripted_llm.provider_config(backoff_cap=0.01), TEXT_ONLY)
    assert len(scripted_llm.probes) == 1  # a broken endpoint is said now, not in 30 s


def _run_against(llm: ScriptedLLM, out: Path) -> Result:
    return cli(
        "run",
        *("--agent", "uitars-v1", "--cases", "1", "--out", str(out), "--workers", "1"),
        *("--model", "scripted-model", "--base-url", llm.openai_url, "--no-frames"),
        *("--api-key-env", "GHOSTEI_SCRIPTED_LLM_KEY", "--backoff-cap", "0.05"),
        *("--max-retries", "2"),
    )


def test_a_run_starts_after_a_429_at_its_endpoint_check(
    scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    scripted_llm.push_probe(Reply.error(429, retry_after=0))
    scripted_llm.always(Reply(text="Thought: done\nAction: finished()"))
    result = _run_against(scripted_llm, tmp_path / "run")
    assert result.exit_code == 0, result.output
    assert len(scripted_llm.probes) == 3  # 429, then the text probe, then the image probe
    assert len((tmp_path / "run" / "episodes.jsonl").read_text().splitlines()) == 1


def test_a_run_refused_by_a_lasting_429_says_so(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    scripted_llm.push_probe(*[Reply.error(429, "rate limit reached")] * 3)
    result = _run_against(scripted_llm, tmp_path / "run")
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = " ".join(result.output.split())
    assert "rate-limiting requests (HTTP 429)" in said and "rate limit reached" in said
    assert len(scripted_llm.probes) == 3 and scripted_llm.requests == []


# -- structured output -------------------------------------------------------------------------

VERDICT = ResponseSchema("verdict", {"type": "object", "properties": {"ok": {"type": "boolean"}}})


def test_a_response_schema_is_part_of_the_request_and_of_the_cache_key(
    scripted_llm: ScriptedLLM,
) -> None:
    plain = scripted_llm.provider_config()
    shaped = dataclasses.replace(plain, response_schema=VERDICT)
    scripted_llm.push("{}")
    build_provider(shaped, sleep=lambda s: None).complete(turn())
    assert scripted_llm.requests[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": VERDICT.schema, "strict": True},
    }
    assert cache_key(plain, turn()) != cache_key(shaped, turn())


@pytest.mark.parametrize(
    ("status", "message", "refused"),
    [
        (400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported", True),
        (400, "guided decoding: json_schema could not be compiled", True),
        (422, "Unrecognized field: tool_choice", True),
        (400, "unsupported parameter: strict", True),
        (400, "This model's maximum context length is 8192 tokens", False),
        (500, "response_format failed on the server", False),  # the server's fault: retried
        # llama-cpp-python's server: its request validation rejects the field with a 500.
        (
            500,
            "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
            "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}",
            True,
        ),
        (500, "1 validation error: {'loc': ('body', 'messages', 0)}", False),
    ],
)
def test_refuses_schema(status: int, message: str, refused: bool) -> None:
    exc = ProviderError(f"model 'm' at http://tools.local answered HTTP {status}: {message}")
    exc.status = status
    assert refuses_schema(exc) is refused
