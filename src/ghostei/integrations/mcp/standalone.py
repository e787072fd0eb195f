"""``ghostei mcp``: one episode for an MCP client that starts its own server, over stdio."""

from __future__ import annotations

from pathlib import Path

import anyio

from ...cases.schema import Case
from ...rundir import EpisodeRecord, RunDir
from ...runner import RunConfig, new_manifest
from .episode import ClientEpisode
from .server import build_server, serve_stdio


def run_episode_over_stdio(case: Case, config: RunConfig, out: Path) -> EpisodeRecord:
    """Serve ``case`` (under ``config``'s attack condition, seed, step limit, screen and
    frames) to the MCP client on this process's standard input and output, as the agent
    ``config.agents[0]``; when the client ends the episode, at the step limit or when it
    closes the connection, the episode is judged and written to ``out``, a new run folder
    (raises RunDirError if it already holds a run). Its record. Interrupted (KeyboardInterrupt),
    the episode is judged and written as if the client had left, and the interruption
    raised."""
    agent = config.agents[0]
    RunDir(out).create(new_manifest(config, [case]), [case])
    episode = ClientEpisode(
        case,
        attack=config.attack,
        agent=config.label(agent),
        seed=config.seed,
        max_steps=config.max_steps,
        screen=(config.width, config.height),
        frames=config.frames,
        out=out,
    )
    try:
        anyio.run(serve_stdio, build_server(episode, episode.case.prompt))
    except BaseException:  # interrupted (^C, or a signal the caller turned into one)
        episode.close()  # judged and written as if the client had left
        raise
    return episode.close()
