"""An agent program that drives the phone through GhostEI's MCP server (GHOSTEI_MCP_URL):
it calls the tools listed in the JSON file named by its argument, in order, each an object
``{"name": ..., "arguments": {...}}``, taking a screenshot before each. A tool call the
server reports as an error makes it exit 1."""

import json
import os
import sys

import anyio
from mcp import Client


async def main(calls: list[dict[str, object]]) -> None:
    async with Client(os.environ["GHOSTEI_MCP_URL"]) as client:
        for call in calls:
            seen = await client.call_tool("screenshot", {})
            if seen.is_error:
                sys.exit(1)
            result = await client.call_tool(str(call["name"]), dict(call["arguments"]))  # type: ignore[arg-type]
            if result.is_error:
                sys.exit(1)


with open(sys.argv[1], encoding="utf-8") as fh:
    anyio.run(main, json.load(fh))
