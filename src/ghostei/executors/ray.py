"""Ray as a run's executor (``ghostei run --executor ray``, the ``ray`` extra).

Ray places the work; GhostEI only says what to run and writes down what comes back. Every
pending episode of the run is one Ray task (on the simulated phone) or one call to a device
actor (on Android: one actor per device, pinned to the node whose adb server sees it, and
an actor runs one call at a time). An episode runs in a run folder of its own on whichever
machine Ray chose (``runner.run_episode_detached``) and sends back its record and files; this
process, the driver, adopts the files into the run folder and appends the record as each
episode finishes, exactly as the local executor does. So resume, reports and determinism do
not know which executor ran an episode.

A worker, actor or node lost mid-run loses only its episodes in flight: each is recorded as
an ``error`` naming what was lost, and ``--resume`` runs it again. Nothing is retried behind
the user's back: an episode against a paid model would be paid for twice, and an Android
episode retried on a half-reset device would not be the episode the record describes.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..cases.schema import Case
from ..rundir import EpisodeRecord, RunDir
from ..runner import Job, RunConfig, lost_record, pending, run_episode_detached

OnRecord = Callable[[EpisodeRecord], None]
Finished = tuple[EpisodeRecord, dict[str, bytes]]  # an episode's record and files
Record = Callable[[EpisodeRecord, dict[str, bytes]], None]


class RayExecutorError(RuntimeError):
    """Ray is missing, unreachable, or has no device for an Android run."""


def import_ray() -> Any:
    """The ray module, or RayExecutorError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise RayExecutorError(
            f"--executor ray needs Ray: pip install 'ghostei[ray]' ({exc})"
        ) from None
    return ray


@dataclass(frozen=True)
class DeviceSpec:
    """Which devices to use: ``serial`` on ``node`` (an IP address), or on every node whose
    adb server has it when ``node`` is None. Written ``SERIAL`` or ``SERIAL@NODE``."""

    serial: str
    node: str | None = None

    @classmethod
    def parse(cls, text: str) -> DeviceSpec:
        serial, _, node = text.partition("@")
        if not serial or (_ and not node):
            raise ValueError(f"{text!r} is not SERIAL or SERIAL@NODE_IP, e.g. emulator-5554")
        return cls(serial, node or None)

    def matches(self, serial: str, node: str) -> bool:
        return serial == self.serial and self.node in (None, node)


@dataclass(frozen=True)
class PlacedDevice:
    """A device an actor will drive: its serial and the Ray node (id and IP) that sees it."""

    serial: str
    node_id: str
    node_ip: str

    @property
    def name(self) -> str:
        return f"{self.serial}@{self.node_ip}"


@dataclass
class RayOutcome:
    """What a Ray run did: the records it appended, and the episodes it could not start
    (every device was lost before them), which ``--resume`` runs."""

    records: list[EpisodeRecord]
    not_started: int = 0


def connect(address: str | None = None) -> None:
    """Connect this process to the Ray cluster at ``address`` (None: the one ``RAY_ADDRESS``
    names, or a new local one); RayExecutorError when there is none."""
    ray = import_ray()
    if ray.is_initialized():
        return
    # Ray Client's proxy starts a server for each client, which a busy head can be slow to
    # have ready ("Initialization failure from server"): a ray:// address is tried again.
    attempts = 3 if (address or "").startswith("ray://") else 1
    failure: Exception | None = None
    for attempt in range(1, attempts + 1):
        try:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
            return
        except Exception as exc:  # Ray's errors have no common base: any is "cannot connect"
            failure = exc
            if attempt < attempts:
                time.sleep(2.0 * attempt)
    hint = ""
    if address not in (None, "auto") and not os.environ.get("RAY_AUTH_MODE"):
        # Ray turns token authentication on by itself only for a cluster it finds.
        hint = (
            "; if the cluster uses token authentication, set RAY_AUTH_MODE=token and "
            "give its token (~/.ray/auth_token or RAY_AUTH_TOKEN)"
        )
    said = str(failure).strip()
    first = said.splitlines()[0] if said else type(failure).__name__
    raise RayExecutorError(f"--ray-address {address or 'auto'}: {first}{hint}")


def execute_on_ray(
    run: RunDir,
    config: RunConfig,
    cases: list[Case],
    *,
    address: str | None = None,
    devices: Sequence[DeviceSpec] = (),
    cpus_per_episode: float = 1.0,
    on_record: OnRecord | None = None,
    on_devices: Callable[[list[PlacedDevice]], None] | None = None,
) -> RayOutcome:
    """Run every pending episode of ``run`` on the Ray cluster at ``address`` (see
    ``connect``), recording each as it finishes; disconnects at the end.

    ``cpus_per_episode`` is what each simulator episode asks Ray for: below 1 for runs that
    wait on a remote model rather than the CPU. ``devices`` picks the Android devices (none
    given: every device of every node); ``on_devices`` is told which were found.
    """
    ray = import_ray()
    jobs = [(c, a, config, str(run.path)) for c, a in pending(run, config, cases)]
    outcome = RayOutcome([])

    def record(r: EpisodeRecord, files: dict[str, bytes]) -> None:
        run.adopt(files)  # before the record, which points at the trajectory
        run.append(r)
        outcome.records.append(r)
        if on_record is not None:
            on_record(r)

    if not jobs:
        return outcome
    connect(address)  # unless already connected
    try:
        if config.backend == "sim":
            _run_tasks(ray, jobs, cpus_per_episode, record)
        else:
            placed = _find_devices(ray, config.adb_port, devices)
            if on_devices is not None:
                on_devices(placed)
            outcome.not_started = _run_on_devices(ray, jobs, placed, config, record)
    finally:
        ray.shutdown()
    return outcome


def _lost(job: Job, exc: BaseException) -> Finished:
    case, agent, config, _ = job
    # The first line names what was lost (RayTaskError repeats the remote traceback after).
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    error = f"lost on the Ray cluster: {type(exc).__name__}: {reason}"
    return lost_record(case, agent, config, error), {}


def _run_tasks(ray: Any, jobs: list[Job], cpus: float, record: Record) -> None:
    """Simulator episodes: one Ray task each, all submitted at once; Ray queues and places
    them. ``max_retries=0``: a task whose worker dies is lost (see the module's note)."""
    task = ray.remote(run_episode_detached).options(num_cpus=cpus, max_retries=0)
    in_flight = {task.remote(job): job for job in jobs}
    while in_flight:
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        for ref in ready:
            job = in_flight.pop(ref)
            try:
                result = ray.get(ref)
            except ray.exceptions.RayError as exc:
                result = _lost(job, exc)
            record(*result)


# ----- Android: one actor per device ------------------------------------------------------------


def _adb_devices(adb_port: int | None) -> list[str]:
    """The serials of the ready devices of this machine's adb server (none without one)."""
    from ..android import AdbError, list_devices

    try:
        listed = list_devices(adb_port=adb_port)
    except AdbError:
        return []
    return sorted(serial for serial, state in listed.items() if state == "device")


def _find_devices(
    ray: Any, adb_port: int | None, wanted: Sequence[DeviceSpec]
) -> list[PlacedDevice]:
    """Ask each live node's adb server for its devices; those ``wanted`` (all, when none
    are named). Raises RayExecutorError when a named device or any device is missing."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    lister = ray.remote(_adb_devices)
    asked = {
        (n["NodeID"], n["NodeManagerAddress"]): lister.options(
            num_cpus=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False),
        ).remote(adb_port)
        for n in nodes
    }
    found = [
        PlacedDevice(serial, node_id, node_ip)
        for (node_id, node_ip), ref in asked.items()
        for serial in ray.get(ref)
    ]
    if wanted:
        for spec in wanted:
            if not any(spec.matches(d.serial, d.node_ip) for d in found):
                raise RayExecutorError(
                    f"--serial {spec.serial}{'@' + spec.node if spec.node else ''}: no node's "
                    f"adb server has it ready; found: {_names(found)}"
                )
        found = [d for d in found if any(s.matches(d.serial, d.node_ip) for s in wanted)]
    if not found:
        raise RayExecutorError(
            f"--backend android: no node of the Ray cluster ({len(nodes)} alive) has a device "
            f"ready on its adb server (port {adb_port or 'default'}); start the emulators "
            "first, or name them with --serial"
        )
    return found


def _names(devices: Iterable[PlacedDevice]) -> str:
    return ", ".join(d.name for d in devices) or "none"


class DeviceWorker:
    """A Ray actor that runs episodes on one Android device, one at a time."""

    def __init__(self, device: PlacedDevice) -> None:
        self.device = device

    def run(self, job: Job) -> Finished:
        case, agent, config, out = job
        record, files = run_episode_detached(
            (case, agent, replace(config, serial=self.device.serial), out)
        )
        return record.model_copy(update={"device": self.device.name}), files


def _run_on_devices(
    ray: Any,
    jobs: list[Job],
    devices: list[PlacedDevice],
    config: RunConfig,
    record: Record,
) -> int:
    """Android episodes on one actor per device, each given its next episode when it hands
    back the last; a lost actor's device is dropped. Returns how many were never started."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    actor_class = ray.remote(DeviceWorker)
    idle = [
        actor_class.options(
            num_cpus=0,
            max_restarts=0,
            max_concurrency=1,
            scheduling_strategy=NodeAffinitySchedulingStrategy(d.node_id, soft=False),
        ).remote(d)
        for d in devices
    ]
    waiting = list(reversed(jobs))  # popped from the end: in the run's order
    in_flight: dict[Any, tuple[Any, Job]] = {}
    while waiting or in_flight:
        while idle and waiting:
            actor, job = idle.pop(), waiting.pop()
            in_flight[actor.run.remote(job)] = (actor, job)
        if not in_flight:
            break  # every device was lost
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        for ref in ready:
            actor, job = in_flight.pop(ref)
            try:
                result = ray.get(ref)
            except ray.exceptions.RayError as exc:
                result = _lost(job, exc)
                if isinstance(exc, ray.exceptions.RayActorError):
                    actor = None  # its device goes with it
            if actor is not None:
                idle.append(actor)
            record(*result)
    return len(waiting)
