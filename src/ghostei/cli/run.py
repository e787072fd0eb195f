"""The ``run``, ``check-endpoint`` and ``parse-action`` commands: agents on cases, a model
endpoint checked, a model's raw output parsed."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, NoReturn, cast

import click
from rich.text import Text

from ..agents import AgentLoadError, resolve_agent
from ..agents.frameworks import MODEL_AGENTS, PROMPT_SIZES
from ..attacks import NO_ATTACK, STANDARD, check_backend, check_condition, fits
from ..audit import audit
from ..defences import DefenceError, parse_specs
from ..executors.local import execute
from ..frames import FRAMES_MODES, FramesMode
from ..metrics import COMPROMISED, is_attacked, is_exposed
from ..parsing import PARSERS, Screen, parse_action
from ..providers import PriceTable, ProviderConfig
from ..providers.preflight import PromptSize
from ..rundir import EpisodeRecord, RunDir, RunDirError, StorageError
from ..runner import RunConfig, new_manifest
from ..sim.navigation import DEFAULT_NAVIGATION, Navigation
from .cases import select_or_fail
from .console import (
    Interrupted,
    connect_model,
    err,
    fail,
    hold_run_dir,
    model_options,
    navigation_option,
    out,
    progress_bar,
    signals_interrupt,
    warn,
)

# ----- run ---------------------------------------------------------------------------------


@click.command()
@click.option(
    "--agent",
    "agents",
    multiple=True,
    help="Agent to run (repeatable). Default: oracle, gullible, random.",
)
@click.option(
    "--cases",
    "cases_spec",
    default=None,
    help="Case ids (3, 1-5, 1,4,9), a path to case files, or PATH:IDS.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Run folder (default: runs/<time>).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-steps", type=click.IntRange(1, 500), default=20, show_default=True)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=lambda: min(64, os.cpu_count() or 1),
    show_default="the number of cores",
    help="Processes that run the episodes: the run's own and the rest spawned beside it.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Episodes in flight at once, as threads spread over the workers (default: as many "
    "as --workers). A run against a remote model waits on the model, not the CPU: e.g. "
    "--workers 2 --concurrency 16 keeps 16 requests going. The android backend runs one "
    "episode at a time.",
)
@click.option("--resume", is_flag=True, help="Finish an interrupted run in --out.")
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where episodes run: processes on this machine, or tasks on a Ray cluster "
    "(the ray extra; Android episodes on one actor per device).",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="auto|HOST:PORT|ray://HOST:10001",
    help="With --executor ray: the cluster (default: $RAY_ADDRESS, or a new local one).",
)
@click.option(
    "--ray-cpus",
    type=click.FloatRange(0.01, 64),
    default=1.0,
    show_default=True,
    help="With --executor ray: CPUs a simulator episode asks for (below 1 for runs that "
    "wait on a remote model).",
)
@click.option(
    "--screen",
    default="1080x2400",
    show_default=True,
    help="Screen size WxH of the simulated phone.",
)
@navigation_option
@click.option(
    "--frames",
    "frames_mode",
    type=click.Choice(FRAMES_MODES),
    default="all",
    show_default=True,
    help="Which frames (PNG) and dumps (XML) to save: every one; the keyframes (first, last, "
    "attack shown, compliance, screen changes); or none.",
)
@click.option("--no-frames", is_flag=True, help="The same as --frames none.")
@model_options(image_max_side=1344, model_help="Model name for framework agents (e.g. gpt-4o).")
@click.option(
    "--backoff-cap",
    type=click.FloatRange(0, 600),
    default=30.0,
    show_default=True,
    help="Longest wait between retries, in seconds.",
)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option(
    "--image-detail", type=click.Choice(["low", "high", "auto"]), default="high", show_default=True
)
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Replay identical model calls from this response cache (and fill it).",
)
@click.option(
    "--prices",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help="Price table (JSON or TOML, USD per 1M tokens per model) to report cost.",
)
@click.option(
    "--backend",
    type=click.Choice(["sim", "android"]),
    default="sim",
    show_default=True,
    help="The built-in simulated phone, or an Android device or emulator through adb.",
)
@click.option(
    "--serial",
    "serials",
    multiple=True,
    help="With --backend android: the device, e.g. emulator-5554. With --executor ray, "
    "repeatable, SERIAL or SERIAL@NODE_IP (default: every device of every node).",
)
@click.option(
    "--adb-port",
    type=click.IntRange(1, 65535),
    default=None,
    help="With --backend android: the adb server's port "
    "(default: $ANDROID_ADB_SERVER_PORT or 5037).",
)
@click.option("--reflection", is_flag=True, help="Ablation: Mobile-Agent-v2's reflection agent.")
@click.option("--thinking", is_flag=True, help="Ablation: ask the model to reason at length.")
@click.option(
    "--defence",
    "defences",
    multiple=True,
    metavar="NAME[:key=value,...]",
    help="Put a defence around every agent (repeatable, applied in order); "
    "see `ghostei defences list`. Your own: path/to/file.py:ClassName.",
)
@click.option(
    "--no-attack",
    is_flag=True,
    help="Switch every case's attack off (harmful instructions become their benign "
    "counterparts): clean utility.",
)
@click.option(
    "--attack-variant",
    default=None,
    metavar="NAME",
    help="An adaptive variant of the attacks, on the cases it fits (see `ghostei cases stats`).",
)
@click.option(
    "--agent-cmd",
    default=None,
    metavar="CMD",
    help="An agent program of your own as the agent: a shell command, started per case on a "
    "served phone it drives over adb (or MCP); {serial} and {instruction} are replaced. See "
    "docs/external-agents.md.",
)
@click.option(
    "--agent-name",
    default=None,
    metavar="NAME",
    help="The --agent-cmd agent's name in records (default: from the command).",
)
@click.option(
    "--episode-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=600.0,
    show_default=True,
    help="Seconds an --agent-cmd episode may run; then the program is ended and the "
    "episode judged.",
)
def run(
    agents: tuple[str, ...],
    cases_spec: str | None,
    out: Path | None,
    seed: int,
    max_steps: int,
    workers: int,
    concurrency: int | None,
    resume: bool,
    executor: Literal["local", "ray"],
    ray_address: str | None,
    ray_cpus: float,
    screen: str,
    navigation: str,
    frames_mode: str,
    no_frames: bool,
    model: str | None,
    base_url: str | None,
    provider: str,
    api_key_env: str | None,
    max_retries: int,
    timeout: float,
    max_tokens: int,
    skip_endpoint_check: bool,
    backoff_cap: float,
    temperature: float,
    image_max_side: int,
    image_detail: Literal["low", "high", "auto"],
    cache_dir: Path | None,
    prices: Path | None,
    backend: Literal["sim", "android"],
    serials: tuple[str, ...],
    adb_port: int | None,
    reflection: bool,
    thinking: bool,
    defences: tuple[str, ...],
    no_attack: bool,
    attack_variant: str | None,
    agent_cmd: str | None,
    agent_name: str | None,
    episode_timeout: float,
) -> None:
    """Run agents on cases on the simulated phone and print a table per agent.

    Framework agents (mobile-agent-v2, appagent, uitars, uitars-v1, m3a, t3a) need --model;
    your own agent is --agent path/to/agent.py:ClassName or package.module:ClassName; an
    agent program of your own that drives an Android phone is --agent-cmd CMD.
    """
    if agent_cmd is None:
        for option in ("agent_name", "episode_timeout"):
            if _given_on_command_line(option) and not resume:
                fail(f"--{option.replace('_', '-')} needs --agent-cmd")
    elif not resume:
        _check_agent_cmd(agent_cmd, agents)
    devices = _executor_options(executor, serials)
    if resume:
        if out is None:
            fail("--resume needs --out RUN_DIR")
        rundir = RunDir(out)
        try:
            manifest = rundir.manifest()
            cases = rundir.cases()
        except RunDirError as exc:
            fail(f"cannot resume {out}: {exc}")
        hold_run_dir(rundir)  # before anything is repaired: one writer per run folder
        try:
            config = RunConfig.from_json(manifest.get("config"))
        except ValueError as exc:
            fail(f"cannot resume {out}: {RunDir.MANIFEST}: {exc}")
        params = click.get_current_context().params
        given = {k: v for k, v in params.items() if _given_on_command_line(k)}
        # Where the episodes run is not what they are: a resumed run may use other devices.
        if "adb_port" in given:
            config = replace(config, adb_port=adb_port)
        if serials and executor == "local":
            config = replace(config, serial=serials[0])
        conflicts = _resume_conflicts(given, config, cases)
        if conflicts:
            fail(
                f"--resume {out}: the run was started with other options; resume it without "
                "them, or start a new run:\n  " + "\n  ".join(conflicts)
            )
        for name in config.agents if config.agent_cmd is None else ():
            try:  # an agent that no longer loads would fail every resumed episode
                resolve_agent(name)
            except AgentLoadError as exc:
                fail(f"cannot resume {out}: {RunDir.MANIFEST}: config.agents: {exc}")
        try:  # reads every record before writing: a corrupt one stops the resume untouched
            found = audit(rundir)  # a record the run cannot have; one whose files are gone
            warnings = rundir.repair()
        except RunDirError as exc:
            fail(f"cannot resume {out}: {exc}")
        for missing in found.warnings():
            warn(f"{missing}: run again")
        for warning in warnings:
            warn(warning)
    else:
        for name in agents:
            try:
                resolve_agent(name)
            except AgentLoadError as exc:
                fail(f"--agent: {exc}")
        try:
            specs = parse_specs(defences)
        except DefenceError as exc:
            fail(f"--defence: {exc}")
        for spec in specs:  # what would fail every episode is refused before the first
            problem = spec.cls.refuse(spec.options, run_model=bool(model))
            if problem:
                fail(f"--defence {spec.text}: {problem}")
        needs_model = [a for a in agents if a in MODEL_AGENTS]
        if needs_model and not model:
            fail(f"--agent {needs_model[0]} needs a model: give --model (and --base-url)")
        if reflection and any(a in MODEL_AGENTS and a != "mobile-agent-v2" for a in agents):
            fail("--reflection: only mobile-agent-v2 has a reflection module")
        attack = _attack_condition(no_attack, attack_variant)
        try:  # a variant the backend cannot show (task-hijack on Android), before any device
            check_backend(attack, backend)
        except ValueError as exc:
            fail(f"--attack-variant {attack}: {exc}")
        if backend == "android" and navigation != DEFAULT_NAVIGATION:
            fail("--navigation: an Android device keeps its own (adb shell cmd overlay ...)")
        if backend == "android" and executor == "local":
            _check_android(serials[0] if serials else None, adb_port)
        if prices is not None:
            try:  # a bad table is the user's to fix, before any episode runs
                PriceTable.load(prices)
            except ValueError as exc:
                fail(f"--prices: {exc}")
        model_config = None
        if model:
            model_config = ProviderConfig(
                provider=provider,
                model=model,
                base_url=base_url,
                api_key_env=api_key_env,
                temperature=temperature,
                seed=seed,
                max_retries=max_retries,
                backoff_cap=backoff_cap,
                timeout=timeout,
                max_tokens=max_tokens,
                image_max_side=image_max_side or None,
                image_detail=image_detail,
                cache_dir=cache_dir,
            )
            needs = {f"--agent {a}": PROMPT_SIZES[a] for a in agents if a in PROMPT_SIZES}
            connect_model(model_config, needs, check=not skip_endpoint_check)
        width, height = _size(screen, "--screen")
        if width < 320 or height < 480:
            fail(f"--screen: {screen} is too small (at least 320x480)")
        chosen = select_or_fail(cases_spec)
        cases = [c for c in chosen if fits(c, attack)]
        if len(cases) < len(chosen):
            left = [c.id for c in chosen if not fits(c, attack)]
            warn(f"--attack {attack}: {len(left)} case(s) it does not fit are left out: {left}")
        if not cases:
            fail(f"--attack {attack}: it fits none of the cases chosen")
        config = RunConfig(
            agents=agents or RunConfig.agents,
            seed=seed,
            max_steps=max_steps,
            width=width,
            height=height,
            frames="none" if no_frames else cast(FramesMode, frames_mode),
            model=model_config,
            reflection=reflection,
            thinking=thinking,
            prices=str(prices.resolve()) if prices else None,
            backend=backend,
            # On Ray each episode's device is the actor's that runs it (see records' device).
            serial=serials[0] if serials and executor == "local" else None,
            adb_port=adb_port,
            defences=defences,
            attack=attack,
            navigation=cast(Navigation, navigation),
        )
        if agent_cmd is not None:
            name = agent_name or _external_name(agent_cmd)
            config = replace(
                config, agents=(name,), agent_cmd=agent_cmd, episode_timeout=episode_timeout
            )
        out = out or Path("runs") / datetime.now().strftime("%Y%m%d-%H%M%S")
        rundir = RunDir(out)
    if config.backend == "android" and executor == "local" and not config.serial:
        fail(f"--resume {out}: the run's devices were its Ray cluster's; give --serial")
    for option in ("workers", "concurrency"):
        if executor == "ray" and _given_on_command_line(option):
            warn(f"--{option}: Ray places the episodes (see --ray-cpus); ignored")
    if executor == "ray":  # before the run folder: an unreachable cluster leaves nothing
        _connect_ray(ray_address)
    if not resume:
        hold_run_dir(rundir)  # one writer: a run started beside it on --out waits its turn
        try:
            rundir.create(new_manifest(config, cases), cases)
        except StorageError as exc:  # no manifest was written: the same command starts it
            fail(f"{exc}; the run did not start: once it can be written, run the command again")
        except RunDirError as exc:
            fail(str(exc))
        except OSError as exc:
            fail(f"--out {out}: cannot create the run folder: {exc.strerror or exc}")
    if executor == "local" and config.backend != "sim" and (concurrency or 1) > 1:
        warn(f"--concurrency {concurrency}: an {config.backend} device runs one episode at a time")
    total = len(cases) * len(config.agents)
    not_started = 0
    try:  # a record that stops validating mid-run (another writer, a bad disk) is an error
        already = len(rundir.records())
        with signals_interrupt(), progress_bar() as progress:
            task = progress.add_task("episodes", total=total, completed=already)
            if config.agent_cmd is not None:
                _execute_external(rundir, config, cases, concurrency or 1, progress, task)
            elif executor == "ray":
                not_started = _execute_on_ray(
                    rundir, config, cases, devices, ray_cpus, lambda r: progress.advance(task)
                )
            else:
                execute(
                    rundir,
                    config,
                    cases,
                    workers=workers,
                    concurrency=concurrency,
                    on_record=lambda r: progress.advance(task),
                )
        records = rundir.records()
    except StorageError as exc:  # a full disk: nothing half-written stays, the run resumes
        fail(f"{exc}; once it can be written, finish the run: ghostei run --resume --out {out}")
    except RunDirError as exc:
        fail(f"{out}: {exc}")
    except KeyboardInterrupt as exc:  # ^C, SIGTERM, SIGHUP: its children are ended by now
        _interrupted(rundir, total, exc)
    _print_summary(records, [config.label(a) for a in config.agents], config.attack)
    out.mkdir(parents=True, exist_ok=True)
    err.print(f"run folder: {rundir.path}", highlight=False, markup=False)
    errors = [r for r in records if r.label == "error"]
    for r in errors:
        line = Text.assemble(("error", "red"), f" case {r.case} agent {r.agent}: {r.error}")
        err.print(line, highlight=False)
    if errors:
        causes = Counter(r.error or "no cause recorded" for r in errors)
        why = "; ".join(f"{n} × {cause}" for cause, n in causes.most_common())
        warn(
            f"{len(errors)} of {len(records)} episode(s) ended in error (counted in no rate, "
            f"never as safe): {why}. `ghostei run --resume --out {out}` runs them again"
        )
    if not_started:
        warn(f"{not_started} episode(s) not started: every device was lost; --resume runs them")
    if errors or not_started:
        sys.exit(1)


def _interrupted(rundir: RunDir, total: int, exc: KeyboardInterrupt) -> NoReturn:
    """Say how far an interrupted run got and how to finish it; exit as a shell reports a
    command the signal ended (130 for ^C, 143 for SIGTERM)."""
    signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
    try:
        done = f"{len(rundir.records())} of {total} episode(s) recorded"
    except RunDirError:
        done = "the episodes finished are recorded"
    err.print(
        f"interrupted ({signal.Signals(signum).name}): {done}, the ones in flight dropped; "
        f"finish the run: ghostei run --resume --out {rundir.path}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    sys.exit(128 + signum)


def _check_agent_cmd(agent_cmd: str, agents: tuple[str, ...]) -> None:
    """Refuse what an --agent-cmd run cannot do, before anything starts (exit 2)."""
    if not agent_cmd.strip():
        fail("--agent-cmd: give the command that starts your agent program")
    # Each option that acts on GhostEI's own agents, or on another kind of run.
    refused = {
        "agents": "--agent: the program is the agent",
        "defences": "--defence: defences wrap GhostEI's own agents, not a program",
        "model": "--model: the program brings its own model",
        "backend": "--backend: the program's phones are served phones",
        "executor": "--executor: --agent-cmd runs on this machine",
        "reflection": "--reflection: an ablation of GhostEI's own agents",
        "thinking": "--thinking: an ablation of GhostEI's own agents",
        "workers": "--workers: programs are processes of their own; use --concurrency",
    }
    for option, why in refused.items():
        if _given_on_command_line(option):
            fail(f"--agent-cmd does not take {why}")


def _external_name(agent_cmd: str) -> str:
    from ..integrations.external import name_from_command

    return name_from_command(agent_cmd)


def _execute_external(
    rundir: RunDir,
    config: RunConfig,
    cases: list[Any],
    concurrency: int,
    progress: Any,
    task: Any,
) -> None:
    """Run an --agent-cmd run's pending episodes (its programs on served phones)."""
    from ..integrations.external import ExternalRunError, execute_external
    from ..integrations.external.adb import AdbMissing

    try:
        records = execute_external(
            rundir,
            config,
            cases,
            concurrency=concurrency,
            on_record=lambda r: progress.advance(task),
        )
    except (ExternalRunError, AdbMissing) as exc:
        fail(str(exc))
    missing = [r.case for r in records if r.exit_code == 127 and r.steps == 0]
    if missing:  # judged as the program's doing, but most likely a typo in CMD
        warn(
            f"--agent-cmd: the shell did not find the program (exit 127) in case(s) {missing}; "
            "see stderr.txt in their episode folders"
        )


def _executor_options(executor: str, serials: tuple[str, ...]) -> list[Any]:
    """The devices a Ray run may use (``SERIAL[@NODE]``); what does not fit the executor fails."""
    if executor == "local":
        for option in ("ray_address", "ray_cpus"):
            if _given_on_command_line(option):
                fail(f"--{option.replace('_', '-')} needs --executor ray")
        if len(serials) > 1:
            fail("--serial: a local run drives one device; several need --executor ray")
        return []
    from ..executors.ray import DeviceSpec, RayExecutorError, import_ray

    try:
        import_ray()
    except RayExecutorError as exc:
        fail(str(exc))
    devices = []
    for text in serials:
        try:
            devices.append(DeviceSpec.parse(text))
        except ValueError as exc:
            fail(f"--serial: {exc}")
    return devices


def _connect_ray(address: str | None) -> None:
    from ..executors.ray import RayExecutorError, connect

    try:
        connect(address)
    except RayExecutorError as exc:
        fail(str(exc))


def _execute_on_ray(
    run: RunDir,
    config: RunConfig,
    cases: list[Any],
    devices: list[Any],
    cpus: float,
    on_record: Callable[[EpisodeRecord], None],
) -> int:
    """Run the pending episodes on the connected Ray cluster; how many were never started."""
    from ..executors.ray import RayExecutorError, execute_on_ray

    def found(placed: list[Any]) -> None:
        names = ", ".join(d.name for d in placed)
        err.print(f"devices ({len(placed)}): {names}", highlight=False, markup=False)

    try:
        outcome = execute_on_ray(
            run,
            config,
            cases,
            devices=devices,
            cpus_per_episode=cpus,
            on_record=on_record,
            on_devices=found,
        )
    except RayExecutorError as exc:
        fail(str(exc))
    return outcome.not_started


def _check_android(serial: str | None, adb_port: int | None) -> None:
    if not serial:
        fail("--backend android needs --serial (see `adb devices`), e.g. emulator-5554")
    try:
        from ..android import AdbError, check_device
    except ImportError as exc:
        fail(f"--backend android needs the android extra: pip install 'ghostei[android]' ({exc})")
    try:
        check_device(serial, adb_port=adb_port)
    except AdbError as exc:
        fail(f"--serial {serial}: {exc}")


def _print_summary(records: list[EpisodeRecord], order: list[str], attack: str = STANDARD) -> None:
    """The run's results per agent, then the episodes a reader must not miss.

    The table is the report's summary (``report.tables.summary_table``): every rate over its
    Wilson interval, VR beside VR exposed and the exposed share; it splits onto a second table
    where the terminal is narrow, cutting no figure or name. Listed below: per agent, the cases
    whose attack never reached the agent (their TC is no evidence of robustness), and the
    episodes compromised before they failed (in N).
    """
    from ..report.tables import build_report, summary_legend, summary_table  # after the run

    report = build_report(records, agent_order=order, by=(), attack=attack)
    out.print(summary_table(report))
    out.print(summary_legend())
    if any(s.metrics.undetermined for s in report.agents.values()):
        out.print(
            "undetermined: the rule judge could not decide (a check left to an LLM judge, or "
            "what this backend cannot observe); kept out of N and every rate — "
            "`ghostei judge RUN_DIR --judge hybrid` asks an LLM about exactly those",
            highlight=False,
        )
    for line in _summary_notes(records, list(report.agents)):  # one line each: easy to grep
        out.print(line, highlight=False, markup=False, soft_wrap=True)


def _summary_notes(records: list[EpisodeRecord], agents: list[str]) -> list[str]:
    """The lines under the summary table: unexposed cases, exposure caveat, compromise lost
    to an error. Errored episodes (no label) are listed apart, on stderr, by ``run``."""
    lines: list[str] = []
    unexposed: dict[str, list[int]] = {}
    clean = 0  # episodes run without attacks: there was nothing to reach the agent
    for r in records:
        if r.label != "error" and not is_attacked(r):
            clean += 1
        elif r.label != "error" and not is_exposed(r):
            unexposed.setdefault(r.agent, []).append(r.case)
    if clean:
        lines.append(
            f"{clean} episode(s) without attacks (--no-attack): their TC is clean utility; "
            "they are no FAS or PAS and outside VR (— when no episode was attacked)"
        )
    for agent in [a for a in agents if a in unexposed]:
        listed = ", ".join(map(str, sorted(unexposed[agent])))
        lines.append(f"{agent}: the attack never reached the agent in cases {listed}")
    unmeasured = sum(r.exposed is None and r.label != "error" for r in records)
    if unmeasured:
        lines.append(
            f"exposure not measured in {unmeasured} older record(s): an attack injected there "
            "counts as having reached the agent (exposed and VR exposed are upper bounds)"
        )
    for r in records:
        if r.label in COMPROMISED and r.error is not None:
            lines.append(
                f"{r.agent} case {r.case}: compromised ({r.label}, counted in N), "
                f"then the episode failed: {r.error}"
            )
    return lines


# ----- check-endpoint, parse-action ----------------------------------------------------------


@click.command("check-endpoint")
@model_options(image_max_side=None, model_help="The model to check (e.g. gpt-4o).")
@click.option(
    "--agent", default=None, help="The agent it is for: images are checked too, unless it is t3a."
)
def check_endpoint_command(
    model: str | None,
    base_url: str | None,
    provider: str,
    api_key_env: str | None,
    max_retries: int,
    timeout: float,
    max_tokens: int,
    agent: str | None,
) -> None:
    """Check a model endpoint as `run` and `judge` do before they start: reachable, the right
    path, the model known, images taken, the context large enough for the agent's largest
    prompt (exit 2 with the likely fix otherwise)."""
    if not model:
        fail("--model: which model to check")
    if agent is not None and agent not in PROMPT_SIZES:
        fail(f"--agent: {agent!r} is not a model agent ({', '.join(sorted(PROMPT_SIZES))})")
    config = ProviderConfig(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        max_retries=max_retries,
        timeout=timeout,
        max_tokens=max_tokens,
    )
    who = f"--agent {agent}" if agent else "an agent"
    size = PROMPT_SIZES[agent] if agent else PromptSize(None, 1)
    report = connect_model(config, {who: size})[1]
    assert report is not None  # checked: no cache
    what = "text and images" if size.images else "text"
    context = f"{report.context:,}" if report.context is not None else "not reported"
    enough = "" if report.needed is None else f" ({who} needs {report.needed:,})"
    out.print(
        f"ok: {base_url or provider} answers {model} ({what}); context {context}{enough}",
        highlight=False,
        markup=False,
    )


@click.command("parse-action")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(PARSERS)),
    required=True,
    help="The agent family whose output is on stdin.",
)
@click.option(
    "--screen",
    default="1080x2400",
    show_default=True,
    help="Device screen WxH that coordinates are mapped onto.",
)
@click.option(
    "--image",
    default=None,
    help="Size WxH of the image the model was shown, if the screenshot was downscaled.",
)
def parse_action_cmd(fmt: str, screen: str, image: str | None) -> None:
    """Parse raw model output (stdin) into the canonical action, printed as JSON."""
    size = _size(screen, "--screen")
    shown = _size(image, "--image") if image else None
    action = parse_action(fmt, sys.stdin.read(), Screen(size[0], size[1], image=shown))
    # Plain JSON on stdout (no console wrapping): users pipe it into their tools.
    click.echo(json.dumps(action.model_dump(exclude_none=True), indent=2, ensure_ascii=False))


# What each run option is in a stored RunConfig (options of the model: in its ProviderConfig).
# --workers, --concurrency, --out and --resume may differ on resume: they change how, not what.
_RUN_FIELDS: dict[str, Callable[[RunConfig], Any]] = {
    "agents": lambda c: c.agents,
    "seed": lambda c: c.seed,
    "max_steps": lambda c: c.max_steps,
    "screen": lambda c: f"{c.width}x{c.height}",
    "frames_mode": lambda c: c.frames,
    "no_frames": lambda c: c.frames == "none",
    "reflection": lambda c: c.reflection,
    "thinking": lambda c: c.thinking,
    "backend": lambda c: c.backend,
    "defences": lambda c: c.defences,
    "no_attack": lambda c: c.attack == NO_ATTACK,
    "attack_variant": lambda c: c.attack if c.attack not in (STANDARD, NO_ATTACK) else None,
    "agent_cmd": lambda c: c.agent_cmd,
    "agent_name": lambda c: c.agents[0] if c.agent_cmd is not None else None,
    "episode_timeout": lambda c: c.episode_timeout,
    "navigation": lambda c: c.navigation,
}
_MODEL_FIELDS = (
    "model",
    "base_url",
    "provider",
    "api_key_env",
    "max_retries",
    "timeout",
    "max_tokens",
    "backoff_cap",
    "temperature",
    "image_max_side",
    "image_detail",
    "cache_dir",
)


def _given_on_command_line(name: str) -> bool:
    source = click.get_current_context().get_parameter_source(name)
    return source in (
        click.core.ParameterSource.COMMANDLINE,
        click.core.ParameterSource.ENVIRONMENT,
    )


def _attack_condition(no_attack: bool, variant: str | None) -> str:
    if no_attack and variant:
        fail("--no-attack and --attack-variant: a run has one attack condition")
    attack = NO_ATTACK if no_attack else variant or STANDARD
    try:
        check_condition(attack)
    except ValueError as exc:
        fail(f"--attack-variant: {exc}")
    return attack


def _resume_conflicts(given: dict[str, Any], config: RunConfig, cases: list[Any]) -> list[str]:
    """Each option given to ``--resume`` that differs from what the run was started with."""
    out = []

    def differs(option: str, now: Any, then: Any) -> None:
        if now != then:
            out.append(f"--{option.replace('_', '-')} {now!r}: the run has {then!r}")

    for name, value in given.items():
        if name in _RUN_FIELDS:
            stored = _RUN_FIELDS[name](config)
            now = tuple(value) if name in ("agents", "defences") else value
            if name == "frames_mode":
                name = "frames"
            if name == "no_frames" and not value:
                continue
            differs(name, now, stored)
        elif name in _MODEL_FIELDS:
            stored = getattr(config.model, name, None) if config.model is not None else None
            if name == "image_max_side":
                value = value or None
            if name == "cache_dir" and value is not None:
                value = Path(value)
            differs(name, value, stored)
        elif name == "prices":
            differs(name, str(Path(value).resolve()) if value else None, config.prices)
        elif name == "cases_spec":
            ids = [c.id for c in select_or_fail(value)]
            differs("cases", ids, [c.id for c in cases])
    return out


def _size(value: str, option: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in value.lower().split("x"))
    except ValueError:
        fail(f"{option}: {value!r} is not WIDTHxHEIGHT, e.g. 1080x2400")
    if width < 1 or height < 1:
        fail(f"{option}: {value} must be positive")
    return width, height
