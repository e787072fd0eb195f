"""What every command shares: the consoles, user errors, progress bars, model options.

Library code never prints; commands do, through these.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import FrameType
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..judge.store import JudgeChoice
from ..providers import Provider, ProviderConfig, ProviderConfigError, build_provider
from ..providers.preflight import EndpointError, EndpointReport, PromptSize, check_endpoint
from ..rundir import RunDir, RunDirError
from ..sim.navigation import DEFAULT_NAVIGATION, NAVIGATIONS

out = Console()
err = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> NoReturn:
    """A user error: a clear message and exit code 2."""
    # The message is data (file names, case text): never interpret it as rich markup.
    err.print(Text.assemble(("error: ", "bold red"), message), highlight=False, soft_wrap=True)
    sys.exit(2)


def hold_run_dir(rundir: RunDir) -> None:
    """Take a run folder's writer lock for this command, released when the command ends;
    exit 2 naming the process that holds it (one writer per run folder)."""
    try:
        lock = rundir.hold()
    except RunDirError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{rundir.path}: cannot take the run folder: {exc.strerror or exc}")
    click.get_current_context().call_on_close(lock.release)


class Interrupted(KeyboardInterrupt):
    """The command was told to stop: ^C (SIGINT), SIGTERM or a hang-up (SIGHUP). A
    KeyboardInterrupt, so every clean-up that ^C runs runs for the others too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """What a shell reports for a command a signal ended."""
        return 128 + self.signum


STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """While the block runs, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` in the main
    thread (Python's default for SIGTERM and SIGHUP is to die at once, cleaning up nothing: a
    run's programs and adb servers would outlive it). One already ignored (a background job's
    SIGINT, ``nohup``'s SIGHUP) stays ignored; after the first, the others are, so that the
    clean-up the first started is not cut short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        for sig in STOPPING_SIGNALS:
            if signal.getsignal(sig) is stop:
                signal.signal(sig, signal.SIG_IGN)
        raise Interrupted(signum)

    before = {sig: signal.getsignal(sig) for sig in STOPPING_SIGNALS}
    for sig, handler in before.items():
        if handler is not signal.SIG_IGN:
            signal.signal(sig, stop)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def warn(message: str) -> None:
    """Something the user should know that does not stop the command, on stderr (stdout
    stays the command's output); like :func:`fail`, never read as markup."""
    err.print(Text.assemble(("warning: ", "yellow"), message), highlight=False, soft_wrap=True)


def progress_bar() -> Progress:
    """A transient progress bar on stderr (stdout stays clean for tables and JSON)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )


def model_options(*, image_max_side: int | None, model_help: str) -> Callable[[F], F]:
    """The options that name a model and how to reach it (``run`` and ``judge``); with no
    ``image_max_side`` (``check-endpoint``, which sends no screen and is the check itself),
    neither ``--image-max-side`` nor ``--skip-endpoint-check``."""
    options = [
        click.option("--model", default=None, help=model_help),
        click.option(
            "--base-url",
            default=None,
            help="OpenAI-compatible endpoint (vLLM, Ollama, SGLang, DashScope, Gemini, ...).",
        ),
        click.option(
            "--provider",
            type=click.Choice(["openai", "anthropic"]),
            default="openai",
            show_default=True,
        ),
        click.option(
            "--api-key-env",
            default=None,
            help="Environment variable holding the API key "
            "(default: OPENAI_API_KEY / ANTHROPIC_API_KEY).",
        ),
        click.option(
            "--max-retries",
            type=click.IntRange(0, 50),
            default=5,
            show_default=True,
            help="Retries of a failed request (429, 5xx, timeouts).",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(0.1, 3600),
            default=120.0,
            show_default=True,
            help="Seconds to wait for one request's answer before it counts as failed (and is "
            "retried); a model on a CPU may need several minutes.",
        ),
        click.option(
            "--max-tokens",
            type=click.IntRange(1, 1_000_000),
            default=1024,
            show_default=True,
            help="Most tokens a model may answer with (its context must hold the prompt "
            "and these).",
        ),
    ]
    if image_max_side is not None:
        options += [
            click.option(
                "--skip-endpoint-check",
                is_flag=True,
                help="Do not check the endpoint before starting (reachable, the model known, "
                "images taken).",
            ),
            click.option(
                "--image-max-side",
                type=click.IntRange(0, 8192),
                default=image_max_side,
                show_default=True,
                help="Downscale images to this longest side before sending (0: full size).",
            ),
        ]
    return stacked(options)


# ``--navigation`` of ``run`` and ``device serve``: the simulated phone's system navigation.
navigation_option = click.option(
    "--navigation",
    type=click.Choice(NAVIGATIONS),
    default=DEFAULT_NAVIGATION,
    show_default=True,
    help="The phone's system navigation: gestures (a swipe up from the handle goes Home), or "
    "the bar of Back, Home and Overview keys a tap presses (buttons; two-button: Back and a "
    "Home pill). Programs whose only back is a tap on the bar need buttons.",
)


def judge_choice_options(command: F) -> F:
    """``--judge-model``, ``--judge-template`` and ``--judge-text-only/--judge-images``: which
    stored LLM judge a report reads when the run holds verdicts of several (see
    ``ghostei.judge.store.JudgeChoice``); they become the keyword ``judge_choice``."""

    options = [
        click.option(
            "--judge-model",
            default=None,
            help="With an LLM judge: read the verdicts of this judge model (needed when the "
            "run holds verdicts of several).",
        ),
        click.option(
            "--judge-template",
            default=None,
            metavar="SHA256_PREFIX",
            help="With an LLM judge: read the verdicts asked with the prompt template whose "
            "SHA-256 starts so (the reports name each judge's).",
        ),
        click.option(
            "--judge-text-only/--judge-images",
            "judge_text_only",
            default=None,
            help="With an LLM judge: read the verdicts made from element lists (--text-only) "
            "or from screenshots.",
        ),
    ]
    return stacked(options)(command)


def judge_choice(model: str | None, template: str | None, text_only: bool | None) -> JudgeChoice:
    """The choice the judge-choice options give."""
    return JudgeChoice(model=model, template=template, text_only=text_only)


def stacked(options: Sequence[Callable[[F], F]]) -> Callable[[F], F]:
    """One decorator applying ``options`` in order (as if each was written above the next)."""

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def connect_model(
    config: ProviderConfig, needs: Mapping[str, PromptSize], *, check: bool = True
) -> tuple[Provider, EndpointReport | None]:
    """The provider for ``config``, or a user error now rather than one error per episode: a
    missing key, SDK or model, and (``check``) an endpoint that cannot serve the clients in
    ``needs`` — not reachable, a wrong path, an unknown model, images refused, a context too
    small for the largest prompt. Returns the check's findings (None when not checked)."""
    try:
        provider = build_provider(config)
    except ProviderConfigError as exc:
        fail(f"--model {config.model}: {exc}")
    if not check or config.cache_dir is not None:  # a response cache may replay offline
        return provider, None
    try:
        report = check_endpoint(config, needs)
    except EndpointError as exc:
        fail(f"--base-url: {exc}")
    note = report.note()
    if note:
        warn(note)
    return provider, report


class _WarnHandler(logging.Handler):
    """Log records as the CLI's warnings (one line each, on stderr, above progress bars)."""

    def emit(self, record: logging.LogRecord) -> None:
        warn(record.getMessage())


def say_retries() -> None:
    """Print every retry of a model request (``ghostei.providers``' warnings) as it happens.

    Worker processes have no handler of their own; Python prints their warnings to stderr.
    """
    logger = logging.getLogger("ghostei.providers")
    if not any(isinstance(h, _WarnHandler) for h in logger.handlers):
        logger.addHandler(_WarnHandler(logging.WARNING))
