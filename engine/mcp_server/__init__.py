"""The MCP server: `sessions_search` and `sessions_history` as Model Context Protocol tools.

An agent runtime (Claude Desktop, an IDE, any MCP client) starts `session-search mcp`
and speaks MCP to it over standard input and output; the tools answer exactly as
`session-search call` and `serve` do, as one requester, under the OpenClaw configuration
the user already has. `docs/mcp.md` is the user's guide. Map of the package:

* `tools.py`   — what `tools/list` shows: names, descriptions (the seed's words), schemas;
* `answers.py` — one call answered: the engine function it runs, the answer's text, and
                 which answers are tool errors (`isError`);
* `sources.py` — the store the server answers from: a store folder, or an OpenClaw state
                 folder imported live before each call;
* `server.py`  — the official `mcp` SDK's low-level server over stdio, its worker thread,
                 and the message when the SDK is not installed.

Only `server.py` imports the SDK (`tests/test_layers.py` keeps it in this room), and only
when it serves, so the rest is read and tested without it. Like `engine.rpc`, this
package is a door: it imports the front door (`engine`), the wings (`engine.store`,
`engine.agent_tools`, `engine.ingest`) and the bottom values, never the stages.
"""
