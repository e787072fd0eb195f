"""A run whose agent is a program: ``concurrency`` seats, one program on each.

A seat (:mod:`.seat`) is a phone served by this process on threads of its own, and a private
adb server that knows that phone alone. Phone ``k`` is ``emulator-<base_port + 2k>``; the
ports are outside the emulator ports (5554-5585) that every adb server scans by default, so
no other adb on the machine finds a run's phones. Each thread takes a free seat, runs one
episode on it (:func:`.episode.run_program_episode`) and gives it back; records are appended
here as episodes finish, as the local executor's :func:`ghostei.executors.local.execute` does
(through its ``in_flight``), so ``--resume`` skips what is recorded and reruns errors.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import queue
import random
import threading
from collections.abc import Callable

from ...cases.schema import Case
from ...executors.local import in_flight
from ...rundir import EpisodeRecord, RunDir
from ...runner import RunConfig, pending
from ...served.serve import ServedPhones
from .adb import adb_binary
from .episode import McpServe, ProgramEnv, ProgramEpisode, run_program_episode
from .seat import Seat

# Where a run's phones listen: above the emulator ports adb scans (5554-5585), below the
# ports the kernel hands out for outgoing connections (32768 and up on Linux).
RUN_PORTS = range(20000, 32000)


class ExternalRunError(ValueError):
    """A run that cannot have a program as its agent (the message says why)."""


def check_config(config: RunConfig) -> None:
    """Refuse what an external agent's run cannot do; raises ExternalRunError."""
    if not config.agent_cmd:
        raise ExternalRunError("an external agent's run needs its command (--agent-cmd)")
    if config.backend != "sim":
        raise ExternalRunError("--agent-cmd runs on served phones (the sim backend), not android")
    if config.defences:
        raise ExternalRunError(
            "defences wrap GhostEI's own agents; an external program runs without them"
        )
    if config.model is not None:
        raise ExternalRunError("--agent-cmd brings its own model: drop --model")
    if len(config.agents) != 1:
        raise ExternalRunError("an external agent's run has one agent (its --agent-name)")


def execute_external(
    run: RunDir,
    config: RunConfig,
    cases: list[Case],
    *,
    concurrency: int = 1,
    on_record: Callable[[EpisodeRecord], None] | None = None,
    base_port: int | None = None,
    offer_mcp: bool = True,
) -> list[EpisodeRecord]:
    """Run every pending episode of ``run`` with ``config.agent_cmd`` as the agent,
    ``concurrency`` at once; the records, in the order they finished. The phones listen from
    ``base_port`` on (default: free ports in ``RUN_PORTS``).

    With ``offer_mcp`` and the mcp extra installed, each episode's phone is also an MCP
    server (streamable HTTP on 127.0.0.1), offered to the program as ``GHOSTEI_MCP_URL``.
    """
    check_config(config)
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    todo = pending(run, config, cases)
    if not todo:
        return []
    count = min(concurrency, len(todo))
    binary = adb_binary()
    finished: list[EpisodeRecord] = []
    closing: list[threading.Thread] = []
    with contextlib.ExitStack() as stack:
        phones = stack.enter_context(_serve(count, base_port, config))
        free: queue.Queue[Seat] = queue.Queue()
        for phone in phones.phones:
            seat = Seat(phone, binary)
            stack.callback(seat.close)
            free.put(seat.open())
        mcp = mcp_server(closing) if offer_mcp else None
        env = ProgramEnv(binary.parent, dict(os.environ), mcp)

        def one(job: tuple[Case, str]) -> EpisodeRecord:
            case, agent = job
            seat = free.get()
            try:
                return run_program_episode(case, agent, config, seat, env, run.path)
            finally:
                free.put(seat)

        try:
            for record in in_flight(one, todo, count):
                run.append(record)
                finished.append(record)
                if on_record is not None:
                    on_record(record)
        finally:  # an interrupted run leaves no program running
            env.live.end_all()
        for thread in closing:
            thread.join()
    return finished


def _serve(count: int, base_port: int | None, config: RunConfig) -> ServedPhones:
    """``count`` served phones from ``base_port`` on, or from a random even port of
    ``RUN_PORTS`` whose ``2 * count`` ports are free (16 tries)."""
    if base_port is not None:
        tries = [base_port]
    else:
        last = RUN_PORTS.stop - 2 * count
        tries = [random.randrange(RUN_PORTS.start, last, 2) for _ in range(16)]
    for port in tries:
        try:
            return ServedPhones(
                count,
                base_port=port,
                width=config.width,
                height=config.height,
                cases=[],
                register=False,
                navigation=config.navigation,
            )
        except OSError:
            continue  # a port of the range is taken
    raise RuntimeError(f"no free ports for {count} served phone(s) (tried from {tries[0]})")


def mcp_server(closing: list[threading.Thread]) -> McpServe | None:
    """How each episode's MCP server is served, when the mcp extra is installed. A server is
    stopped in a thread of its own (in ``closing``: uvicorn takes a fifth of a second to
    stop), so the next episode need not wait for it."""
    if importlib.util.find_spec("mcp") is None:
        return None
    from ..mcp import serve_http

    def serve(episode: ProgramEpisode) -> tuple[str, Callable[[], None]]:
        # The server's instructions tell an MCP client the task, as GHOSTEI_INSTRUCTION does.
        handle = serve_http(episode, instruction=episode.phone.case.prompt)

        def stop() -> None:
            thread = threading.Thread(target=handle.close, name="ghostei-mcp-close")
            thread.start()
            closing.append(thread)

        return handle.url, stop

    return serve
