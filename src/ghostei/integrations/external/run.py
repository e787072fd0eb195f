"""A run whose agent is a program: ``concurrency`` served phones, one program on each.

Phone ``k`` is ``emulator-<base_port + 2k>`` (5554, 5556, … by default), served by this
process on threads of its own; a private adb server knows exactly these phones. Each thread
takes a free phone, runs one episode on it (:func:`.episode.run_program_episode`) and gives it
back; records are appended here as episodes finish, as the local executor's
:func:`ghostei.executors.local.execute` does (through its ``in_flight``), so ``--resume``
skips what is recorded and reruns errors.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import threading
from collections.abc import Callable

from ...cases.schema import Case
from ...executors.local import in_flight
from ...rundir import EpisodeRecord, RunDir
from ...runner import RunConfig, pending
from ...served.serve import DEFAULT_CONSOLE_PORT, ServedPhone, ServedPhones
from .adb import adb_binary, adb_server
from .episode import McpServe, ProgramEnv, ProgramEpisode, run_program_episode


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
    base_port: int = DEFAULT_CONSOLE_PORT,
    offer_mcp: bool = True,
) -> list[EpisodeRecord]:
    """Run every pending episode of ``run`` with ``config.agent_cmd`` as the agent,
    ``concurrency`` at once; the records, in the order they finished.

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
    with adb_server(binary) as server, _serve(count, base_port, server.port, config) as phones:
        server.attach([p.adb_port for p in phones.phones], phones.serials)
        free: queue.Queue[ServedPhone] = queue.Queue()
        for phone in phones.phones:
            free.put(phone)
        mcp = mcp_server(closing) if offer_mcp else None
        env = ProgramEnv(binary.parent, server.port, dict(os.environ), mcp)

        def one(job: tuple[Case, str]) -> EpisodeRecord:
            case, agent = job
            phone = free.get()
            try:
                return run_program_episode(case, agent, config, phone, env, run.path)
            finally:
                free.put(phone)

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


def _serve(count: int, base_port: int, adb_port: int, config: RunConfig) -> ServedPhones:
    """``count`` served phones from ``base_port`` on, or from the next ports free for all of
    them (as an emulator takes the next free port when a user's own emulator has 5554)."""
    for port in range(base_port, base_port + 16 * 2 * count, 2 * count):  # 16 tries
        try:
            return ServedPhones(
                count,
                base_port=port,
                adb_server_port=adb_port,
                width=config.width,
                height=config.height,
                cases=[],
                register=False,
            )
        except OSError:
            continue  # a port of the range is taken
    raise RuntimeError(f"no free ports for {count} served phone(s) from {base_port} on")


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
