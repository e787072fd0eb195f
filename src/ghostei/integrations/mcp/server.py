"""The phone's MCP server: the shared tool set, ``screenshot`` and ``elements``, over any
:class:`~ghostei.integrations.tools.ToolSession`; served over stdio or streamable HTTP."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import socket
import threading
import time
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from ... import __version__
from ..tools import (
    PHONE_TOOLS,
    TOOLS_BY_NAME,
    ToolSession,
    check_arguments,
    check_on_screen,
    element_list,
    tool_call_to_action,
)

SERVER_NAME = "ghostei-phone"
INSTRUCTIONS = """\
An Android phone, for one task. Look with `screenshot` (the screen as a PNG) and `elements` \
(the numbered list of its UI elements: tap one by its index, or a pixel x, y). Each other tool \
is one action on the phone. When the task is done call `finish`; to answer a question call \
`answer`; if the request is unsafe or impossible call `refuse`. Each of these three ends the \
task: the phone takes no action after it."""

# The two ways to look; they change nothing on the phone.
LOOK_TOOLS = (
    types.Tool(
        name="screenshot",
        description="The phone's screen now, as a PNG image.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="elements",
        description='The screen\'s UI elements now, numbered: [index] class "label" at '
        "(x, y) (flags). Tap, type into or scroll an element by its index.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
)


def _tools() -> list[types.Tool]:
    acting = [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.input_schema(),
            annotations=types.ToolAnnotations(read_only_hint=False, open_world_hint=False),
        )
        for spec in PHONE_TOOLS
    ]
    return [*LOOK_TOOLS, *acting]


def _text(text: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def call_tool(session: ToolSession, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """One tool call on ``session``: what the server answers it. A call the phone cannot
    carry out is an error result and no step: an unknown tool, arguments its schema does not
    take (a required one missing), a target not on the screen now (an index it does not
    list, a point off it), or an episode that ended."""
    if name == "screenshot":
        png = session.look().png
        data = base64.b64encode(png).decode("ascii")
        return types.CallToolResult(content=[types.ImageContent(data=data, mime_type="image/png")])
    if name == "elements":
        return _text(element_list(session.look()))
    spec = TOOLS_BY_NAME.get(name)
    if spec is None:
        return _text(f"unknown tool {name!r}", error=True)
    if session.ended:
        return _text(f"{name}: the episode has ended; the phone takes no more actions", True)
    try:
        # The SDK's low-level Server does not hold arguments to the input schema it lists.
        check_arguments(spec, arguments)
        action = tool_call_to_action(name, arguments)
        if action.index is not None or action.x is not None:
            check_on_screen(action, session.screen(), name)
    except ValueError as exc:
        return _text(f"invalid call {name}({json.dumps(arguments, sort_keys=True)}): {exc}", True)
    if spec.ends:
        session.end(action)
        return _text(f"{name}: the episode has ended")
    obs = session.act(action)
    result = f"done; foreground app: {obs.foreground_package}"
    if session.ended:
        result += "; the episode has ended (step limit): the phone takes no more actions"
    return _text(result)


def build_server(session: ToolSession, instruction: str | None = None) -> Server[Any]:
    """The MCP server of ``session``'s phone: each action tool is one step
    (``session.act``), ``answer``/``refuse``/``finish`` end the episode (``session.end``),
    ``screenshot`` and ``elements`` look (``session.look``). Calls reach the session one at
    a time, whatever the transport's concurrency. ``instruction``, the user's task, is told
    to the client in the server's instructions."""
    lock = threading.Lock()  # a session is driven by one call at a time
    tools = _tools()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        with lock:
            try:
                return call_tool(session, params.name, arguments)
            except Exception as exc:  # GhostEI's own failure: the client is told, not hung
                return _text(f"{params.name}: the phone failed: {type(exc).__name__}: {exc}", True)

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS
        if instruction is None
        else f"{INSTRUCTIONS}\n\nThe user's task: {instruction}",
        on_list_tools=list_tools,
        on_call_tool=on_call,
    )


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's standard input and output until the client
    closes them."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


class HttpServer:
    """An MCP server on streamable HTTP, running in a background thread of its own."""

    PATH = "/mcp"

    def __init__(self, server: Server[Any], host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.host = host
        self.port: int = self._socket.getsockname()[1]
        app = server.streamable_http_app(streamable_http_path=self.PATH, host=host)
        config = uvicorn.Config(
            app,
            log_config=None,  # library code never prints: uvicorn logs to logging only
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        self._uvicorn = uvicorn.Server(config)
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, name="ghostei-mcp-http", daemon=True)

    @property
    def url(self) -> str:
        """The streamable HTTP endpoint, e.g. ``http://127.0.0.1:41234/mcp``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.PATH}"

    def _serve(self) -> None:
        try:
            asyncio.run(self._uvicorn.serve(sockets=[self._socket]))
        except BaseException as exc:  # told to the thread that waits for the start
            self._failure = exc

    def start(self, timeout: float = 30.0) -> None:
        """Start serving; returns once the server accepts connections."""
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._uvicorn.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"the MCP server did not start: {self._failure!r}")
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"the MCP server did not start in {timeout:g} s")
            time.sleep(0.01)

    def close(self) -> None:
        """Stop serving (open connections are closed) and wait for the thread."""
        self._uvicorn.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        with contextlib.suppress(OSError):
            self._socket.close()

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve_http(
    session: ToolSession,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    instruction: str | None = None,
) -> HttpServer:
    """Serve ``session``'s phone over streamable HTTP at ``host:port`` (0: a free port) in a
    background thread (``instruction``: as :func:`build_server` takes it); the handle's
    ``url`` is the endpoint, ``close()`` stops it."""
    handle = HttpServer(build_server(session, instruction), host, port)
    handle.start()
    return handle
