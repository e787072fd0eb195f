"""The phone as an MCP server (the ``mcp`` extra, on the official ``mcp`` SDK).

:func:`build_server` serves any :class:`ToolSession` — one episode's phone seen through the
tools — with the shared tool set (:mod:`ghostei.integrations.tools`), ``screenshot`` and
``elements``; :func:`serve_http` serves it over streamable HTTP in a background thread, and
:func:`serve_stdio` over this process's standard input and output. :class:`ClientEpisode`
is such a session over an in-process episode on the simulated phone, and
:func:`run_episode_over_stdio` is ``ghostei mcp``: one episode for a client that starts its
own server, judged and written to a run folder.
"""

from ..tools import ToolSession
from .episode import ClientEpisode
from .server import HttpServer, build_server, call_tool, serve_http, serve_stdio
from .standalone import run_episode_over_stdio

__all__ = [
    "ClientEpisode",
    "HttpServer",
    "ToolSession",
    "build_server",
    "call_tool",
    "run_episode_over_stdio",
    "serve_http",
    "serve_stdio",
]
