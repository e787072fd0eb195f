"""Running episodes: device reset, injection, the agent loop, the judge, and the run store.

An episode runs here (``run_episode``); where a run's pending episodes are placed — this
process and workers beside it, or a Ray cluster — is the executors' (:mod:`ghostei.executors`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from . import __version__
from .agents import Agent, AgentContext, build_agent
from .attacks import NO_ATTACK, STANDARD, case_under, check_condition
from .audit import audit
from .cases.schema import Case
from .defences import (
    Defence,
    DefenceContext,
    DefenceError,
    PromptDefended,
    defended,
    defended_label,
    parse_specs,
)
from .device import Device
from .episode import EpisodePhone
from .frames import FRAMES_MODES, FrameRecorder, FramesMode
from .injection import NoInjection, injection_kind
from .providers import MeteredProvider, PriceTable, Provider, ProviderConfig, build_provider
from .providers.retry import REQUEST_CONTEXT
from .rundir import EpisodeRecord, RunDir
from .sim.navigation import DEFAULT_NAVIGATION, Navigation
from .sim.navigation import check as check_navigation
from .sim.phone import SimPhone
from .world import Owner, build_world

Backend = Literal["sim", "android"]


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides what a run does (recorded in the manifest, secrets excepted)."""

    agents: tuple[str, ...] = ("oracle", "gullible", "random")
    seed: int = 0
    max_steps: int = 20
    width: int = 1080
    height: int = 2400
    frames: FramesMode = "all"  # which frames (and dumps) are saved: all, keyframes, none
    model: ProviderConfig | None = None  # the model behind framework agents
    reflection: bool = False
    thinking: bool = False
    prices: str | None = None  # a price table (JSON or TOML) that turns tokens into cost
    backend: Backend = "sim"  # the simulated phone, or an Android device through adb
    serial: str | None = None  # the Android device (``adb devices``), e.g. emulator-5554
    adb_port: int | None = None  # the adb server's port (default: $ANDROID_ADB_SERVER_PORT, 5037)
    # Defences around every agent, in order (``NAME[:key=value,...]``, see ghostei.defences).
    defences: tuple[str, ...] = ()
    # The attack condition: each case's own (standard), none (clean utility) or an adaptive
    # variant (see ghostei.attacks).
    attack: str = STANDARD
    # An external agent program (``--agent-cmd``): the shell command that starts it, and how
    # long an episode may run (seconds). ``agents`` then holds its one name. The run layer
    # only records these: ghostei.integrations.external runs such episodes.
    agent_cmd: str | None = None
    episode_timeout: float = 600.0
    # The simulated (and served) phone's system navigation: gestures, or a bar of keys.
    navigation: Navigation = DEFAULT_NAVIGATION

    def label(self, agent: str) -> str:
        """The agent's name in records and reports: with its defences, ``m3a+overlay-gate``."""
        return defended_label(agent, parse_specs(self.defences))

    def to_json(self) -> dict[str, Any]:
        device: dict[str, Any] = {}
        if self.backend != "sim":
            device = {"serial": self.serial, "adb_port": self.adb_port}
        external: dict[str, Any] = {}
        if self.agent_cmd is not None:  # other runs' manifests stay as they were
            external = {"agent_cmd": self.agent_cmd, "episode_timeout": self.episode_timeout}
        navigation: dict[str, Any] = {}
        if self.navigation != DEFAULT_NAVIGATION:  # other runs' manifests stay as they were
            navigation = {"navigation": self.navigation}
        return {
            "agents": list(self.agents),
            "seed": self.seed,
            "max_steps": self.max_steps,
            "screen": [self.width, self.height],
            "frames": self.frames,
            "backend": self.backend,
            **device,
            "model": _model_json(self.model),
            "reflection": self.reflection,
            "thinking": self.thinking,
            "prices": self.prices,
            "defences": list(self.defences),
            "attack": self.attack,
            **external,
            **navigation,
        }

    @classmethod
    def from_json(cls, data: object) -> RunConfig:
        """The config a manifest recorded, checked as strictly as the run command's options.

        A manifest is a file that can be edited or damaged, and a bad config would fail every
        resumed episode: raises ValueError naming the field, e.g. ``config.screen: ...``.
        """
        if not isinstance(data, dict):
            raise ValueError(f"config: must be a JSON object, not {data!r}")
        required = object()

        def value(name: str, kind: type, what: str, default: Any = required) -> Any:
            # A missing field takes its default; None is allowed where the default is None.
            if name not in data or (data[name] is None and default is None):
                if default is required:
                    raise ValueError(f"config.{name}: missing")
                return default
            got = data[name]
            # bool is an int to Python, but true is no step count, seed or pixel size.
            if not isinstance(got, kind) or (kind is int and isinstance(got, bool)):
                raise ValueError(f"config.{name}: must be {what}, not {got!r}")
            return got

        agents = value("agents", list, "a list of agent names")
        if not agents or not all(isinstance(a, str) and a for a in agents):
            raise ValueError(f"config.agents: must be a non-empty list of agent names: {agents!r}")
        max_steps = value("max_steps", int, "an integer")
        if max_steps < 1:
            raise ValueError(f"config.max_steps: must be at least 1, not {max_steps}")
        screen = value("screen", list, "[width, height]", [1080, 2400])
        if len(screen) != 2 or not all(type(v) is int and v > 0 for v in screen):
            raise ValueError(f"config.screen: must be [width, height] in pixels, not {screen!r}")
        width, height = screen
        if width < 320 or height < 480:  # what the run command refuses for --screen
            raise ValueError(f"config.screen: {width}x{height} is too small (at least 320x480)")
        backend = value("backend", str, "sim or android", "sim")
        if backend not in ("sim", "android"):
            raise ValueError(f"config.backend: unknown backend {backend!r} (sim or android)")
        # None for an android run on Ray, whose devices are its actors' (records' device).
        serial = value("serial", str, "a device serial", None)
        adb_port = value("adb_port", int, "a port number", None)
        if adb_port is not None and not 1 <= adb_port <= 65535:
            raise ValueError(f"config.adb_port: {adb_port} is no port number (1-65535)")
        model = value("model", dict, "a JSON object", None)
        if model is not None:
            if not isinstance(model.get("model"), str) or not model["model"]:
                raise ValueError("config.model.model: must be a model name")
            try:
                model = _model_from_json(model)
            except TypeError as exc:  # a key ProviderConfig does not know
                raise ValueError(f"config.model: {exc}") from None
        defences = value("defences", list, "a list of defence specs", [])
        if not all(isinstance(d, str) and d for d in defences):
            raise ValueError(f"config.defences: must be a list of defence specs: {defences!r}")
        try:
            parse_specs(defences)
        except DefenceError as exc:
            raise ValueError(f"config.defences: {exc}") from None
        attack = value("attack", str, "an attack condition", STANDARD)
        try:
            check_condition(attack)
        except ValueError as exc:
            raise ValueError(f"config.attack: {exc}") from None
        agent_cmd = value("agent_cmd", str, "a shell command", None)
        navigation = value("navigation", str, "a navigation mode", DEFAULT_NAVIGATION)
        try:
            navigation = check_navigation(navigation)
        except ValueError as exc:
            raise ValueError(f"config.navigation: {exc}") from None
        timeout = data.get("episode_timeout", 600.0)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"config.episode_timeout: must be seconds above 0, not {timeout!r}")
        return cls(
            agents=tuple(agents),
            agent_cmd=agent_cmd,
            episode_timeout=float(timeout),
            defences=tuple(defences),
            attack=attack,
            seed=value("seed", int, "an integer"),
            max_steps=max_steps,
            width=width,
            height=height,
            frames=_frames_mode(data),
            model=model,
            reflection=value("reflection", bool, "true or false", False),
            thinking=value("thinking", bool, "true or false", False),
            prices=value("prices", str, "a path", None),
            backend=backend,
            serial=serial,
            adb_port=adb_port,
            navigation=navigation,
        )


def _frames_mode(data: dict[str, Any]) -> FramesMode:
    # Manifests before --frames recorded a flag, save_frames: true is all, false none.
    if "frames" not in data:
        flag = data.get("save_frames", True)
        if not isinstance(flag, bool):
            raise ValueError(f"config.save_frames: must be true or false, not {flag!r}")
        return "all" if flag else "none"
    mode = data["frames"]
    if mode not in FRAMES_MODES:
        raise ValueError(f"config.frames: must be one of {', '.join(FRAMES_MODES)}, not {mode!r}")
    return cast(FramesMode, mode)


def _model_json(model: ProviderConfig | None) -> dict[str, Any] | None:
    # The config names the key's environment variable, never the key itself.
    if model is None:
        return None
    data = asdict(model)
    data["cache_dir"] = str(model.cache_dir) if model.cache_dir is not None else None
    return data


def _model_from_json(data: dict[str, Any]) -> ProviderConfig:
    cache = data.get("cache_dir")
    return replace(
        ProviderConfig(**{**data, "cache_dir": None}), cache_dir=Path(cache) if cache else None
    )


@dataclass
class Trajectory:
    """What happened in an episode, step by step."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    frames: FrameRecorder = field(default_factory=FrameRecorder)


def make_device(config: RunConfig, case: Case) -> Device:
    """The device an episode runs on: a fresh simulated phone, or the configured Android one."""
    if config.backend == "sim":
        return SimPhone(config.width, config.height, config.navigation)
    if config.backend == "android":
        if not config.serial:
            raise ValueError("the android backend needs a device serial (--serial)")
        from .android import AndroidDevice, shared_phish_server  # needs the android extra

        return AndroidDevice(
            config.serial,
            adb_port=config.adb_port,
            case_id=case.id,
            phish_server=shared_phish_server(),
        )
    raise ValueError(f"unknown backend {config.backend!r} (sim or android)")


def run_episode(case: Case, agent_name: str, config: RunConfig, out: Path | None) -> EpisodeRecord:
    """Run one episode and write its trajectory under ``out`` (if given).

    An exception from the agent or the device ends the episode; the rules still judge what
    was observed up to it, so compliance seen before the crash keeps its label (FAS, or PAS
    as a lower bound) with the error beside it. Without such compliance the record is
    ``error``: never scored, and re-run by ``--resume``. The run goes on either way.
    """
    started = time.perf_counter()
    label = config.label(agent_name)
    REQUEST_CONTEXT.set(f"case {case.id}, agent {label}")
    phone = EpisodePhone.stage(case, config.attack, lambda shaped: make_device(config, shaped))
    case, device = phone.case, phone.device
    trajectory = Trajectory(frames=FrameRecorder(config.frames))
    usage: dict[str, int] = {}
    error: str | None = None
    verdict = None
    metered: MeteredProvider | None = None
    guards: list[Defence] = []
    try:
        obs = phone.start(config.seed)
        if config.model is not None:
            metered = MeteredProvider(build_provider(config.model))
        owner = build_world(case.setup).owner
        agent, guards = _agent_behind_defences(agent_name, case, config, owner, metered)
        agent.reset(case.prompt)
        for step in range(config.max_steps):
            first_event = phone.begin(step, obs)
            trajectory.frames.keep(obs)
            agent_step = agent.act(obs)
            for k, v in agent_step.usage.items():
                usage[k] = usage.get(k, 0) + v
            action = agent_step.action
            blocked = agent_step.blocked
            obs = phone.act(step, action, blocked)
            if agent_step.summary is not None and trajectory.steps:
                trajectory.steps[-1]["summary"] = agent_step.summary
            trajectory.steps.append(phone.step_record(step, first_event, agent_step, obs))
            if agent_step.done:
                break
        trajectory.frames.keep(obs)
    except Exception as exc:  # any failure inside an episode ends it; what was seen stays
        error = f"{type(exc).__name__}: {exc}"
    verdict, error, final_state = phone.conclude(trajectory.steps, error)
    cost = None
    if metered is not None:
        # The provider's own count: it includes retries and calls of a step that failed; and
        # the count of any model a defence calls besides the run's (its ``own_model``).
        own = _own_models(guards)
        usage = sum((m.usage for m in own), metered.usage).to_dict()
        if config.prices and config.model is not None:
            table = PriceTable.load(Path(config.prices))
            costs = [table.cost(config.model.model, metered.usage)]
            costs += [table.cost(m.config.model, m.usage) for m in own]
            cost = None if None in costs else sum(c for c in costs if c is not None)
    rel = ""
    try:
        if out is not None:
            rel = write_episode(out, phone, label, trajectory, verdict, error, final_state)
    finally:
        device.close()
    return EpisodeRecord(
        case=case.id,
        agent=label,
        seed=config.seed,
        label="error" if verdict is None else verdict.label,
        **phone.outcome_fields(),
        steps=len(trajectory.steps),
        verdict=verdict,
        error=error,
        usage=usage,
        cost=cost,
        seconds=round(time.perf_counter() - started, 3),
        trajectory=rel,
        device=config.serial if config.backend != "sim" else None,
    )


def _agent_behind_defences(
    name: str, case: Case, config: RunConfig, owner: Owner, metered: MeteredProvider | None
) -> tuple[Agent, list[Defence]]:
    """The agent for an episode behind the run's defences (built fresh), and the defences.

    A defence that rewrites prompts (every prompt defence, and an observation defence with a
    note for the model, as spotlight's on its datamarks) wraps the model the agent is given.
    """
    guards = [
        spec.build(DefenceContext.for_case(case, owner, metered, config.backend))
        for spec in parse_specs(config.defences)
    ]
    prompting = [g for g in guards if type(g).prompt is not Defence.prompt]
    model: Provider | None = metered
    if metered is not None and prompting:
        model = PromptDefended(metered, prompting)
    ctx = AgentContext(
        case=case,
        seed=config.seed,
        max_steps=config.max_steps,
        owner=owner,
        provider=model,
        reflection=config.reflection,
        thinking=config.thinking,
    )
    return defended(build_agent(name, ctx), *guards), guards


def _own_models(guards: list[Defence]) -> list[MeteredProvider]:
    """The metered models defences call besides the run's (llm-guard's ``model=``).

    Without a run model the steps' usage, where such a defence adds its calls, is the count.
    """
    return [g.own_model for g in guards if g.own_model is not None]


def _store_dump(run: RunDir, xml: str) -> Path:
    # Dumps are gzipped (a tenth of their size; they were 16 of the default run's 196 MB)
    # and named by the SHA-256 of their text. ``mtime=0``: the same dump, the same bytes.
    text = xml.encode("utf-8")
    name = hashlib.sha256(text).hexdigest()
    stored = run.frame_path(name, ".xml.gz")
    if stored.exists():  # most dumps repeat one seen before: no need to compress them again
        return stored
    return run.store_frame(gzip.compress(text, compresslevel=6, mtime=0), ".xml.gz", name)


def write_episode(
    out: Path,
    phone: EpisodePhone,
    agent: str,
    trajectory: Trajectory,
    verdict: Any,
    error: str | None,
    final_state: dict[str, Any] | None,
    files: dict[str, bytes] | None = None,
) -> str:
    """Write a finished episode's trajectory, events and kept frames into the run folder
    ``out``; the trajectory folder's path relative to it (a record's ``trajectory``).
    ``files`` are more files for the folder (an external program's output), by name."""
    shots = trajectory.frames.finish(
        trajectory.steps,
        list(phone.device.events),
        exposed_step=phone.injection.exposed_step,
        verdict=verdict,
    )
    return _write_trajectory(
        out,
        phone.case,
        agent,
        phone.device,
        trajectory.steps,
        shots,
        verdict,
        error,
        final_state,
        files or {},
    )


def _write_trajectory(
    out: Path,
    case: Case,
    agent: str,
    device: Device,
    steps: list[dict[str, Any]],
    shots: list[tuple[bytes, str, str] | None],
    verdict: Any,
    error: str | None,
    final_state: dict[str, Any] | None,
    files: dict[str, bytes],
) -> str:
    run = RunDir(out)
    final = run.trajectory_dir(agent, case.id)
    # Frames and dumps live in the run's store, named by their hash; the trajectory refers
    # to them by paths relative to its own folder, as it did to its own frames before. A frame
    # that --frames keyframes dropped is null in both lists, so the others keep their steps.
    frames: list[str | None] = []
    dumps: list[str | None] = []
    for shot in shots:
        if shot is None:
            frames.append(None)
            dumps.append(None)
            continue
        png, name, xml = shot
        frames.append(os.path.relpath(run.store_frame(png, ".png", name), final))
        dumps.append(os.path.relpath(_store_dump(run, xml), final))
    for step, frame in zip(steps, frames, strict=False):
        step["frame"] = frame
    events = "".join(json.dumps(e.to_json(), sort_keys=True) + "\n" for e in device.events)
    doc = {
        "case": case.id,
        "agent": agent,
        "instruction": case.prompt,
        "steps": steps,
        "frames": frames,
        "dumps": dumps,
        "verdict": verdict.model_dump() if verdict is not None else None,
        "error": error,
        "final_state": final_state,
    }
    trajectory = json.dumps(doc, indent=1, sort_keys=True)
    run.write_trajectory(
        final,
        {
            **files,
            "events.jsonl": events.encode("utf-8"),
            "trajectory.json": trajectory.encode("utf-8"),
        },
    )
    return str(final.relative_to(out))


# ----- whole runs ------------------------------------------------------------------------------


def new_manifest(config: RunConfig, cases: list[Case]) -> dict[str, Any]:
    """The manifest of a new run."""
    return {
        "ghostei_version": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": config.to_json(),
        "cases": [c.id for c in cases],
    }


def pending(run: RunDir, config: RunConfig, cases: list[Case]) -> list[tuple[Case, str]]:
    """The (case, agent) episodes not yet recorded, in a stable order."""
    # Error episodes are not done: resuming runs them again (the new record supersedes). An
    # episode with a decided label is done, even one that ended in an error after the agent
    # was seen complying: re-running it could only lose that observation. One whose
    # trajectory or frames are gone is not done either: nothing shows what it was.
    records = run.records()
    lost = set(audit(run).missing) if records else set()
    done = {r.key for r in records if r.label != "error" and r.key not in lost}
    return [(c, a) for a in config.agents for c in cases if (config.label(a), c.id) not in done]


Job = tuple[Case, str, RunConfig, str]  # (case, agent, config, run folder): one episode


def run_episode_detached(job: Job) -> tuple[EpisodeRecord, dict[str, bytes]]:
    """Run an episode away from its run folder (on another machine, perhaps): its record,
    and the files it wrote, named relative to the run folder, for ``RunDir.adopt``.

    The episode writes to a run folder of its own, which goes when it is read: the same
    code writes the same bytes as ``run_episode`` into the real folder would.
    """
    case, agent, config, _ = job
    with tempfile.TemporaryDirectory(prefix="ghostei-episode-") as tmp:
        root = Path(tmp)
        record = run_episode(case, agent, config, root)
        files = {
            path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file()
        }
    return record, files


def lost_record(case: Case, agent: str, config: RunConfig, reason: str) -> EpisodeRecord:
    """The record of an episode that never reported back (its worker or machine was lost):
    an error with nothing observed, which ``--resume`` runs again."""
    shaped = case_under(case, config.attack)
    return EpisodeRecord(
        case=case.id,
        agent=config.label(agent),
        seed=config.seed,
        label="error",
        injection=injection_kind(shaped) if config.attack != NO_ATTACK else NoInjection.kind,
        attack_fired=False,
        steps=0,
        error=reason,
    )
