"""The agent-tools wing: what an agent or a person calls, bounded, and who may see what.

An agent calls `sessions_search` and `sessions_history`; the Gateway's `sessions.search`
handler and the Control UI's command palette search call the same store. Each answers
within the product's count, excerpt, byte and time bounds, and reads only the sessions
its requester may see. Modules, tool by tool:

* `sessions_search`: the agent tool's arguments, targets, kernel calls, hit shape, order
  and budgets;
* `gateway_search`: the Gateway's `sessions.search` handler (one agent per call);
* `sessions_history`: the agent tool over `engine.history` (which rows a requester reads,
  the tool's envelope), and `history_access`: its visibility seam;
* `ui_search`: the Control UI's command palette search, and `title_match`: its title
  normaliser (words, folding, literal identifiers);
* `budgets`: the 90 s request and 60 s reader budgets and the reader's admission.

Who may see which session, one question every tool asks, answered from three things:

* `session_keys`: what a session key says by its shape (agent-scoped, incognito, a
  subagent or ACP child, a sessionId rather than a key);
* `tool_config`: the part of an OpenClaw configuration file that governs session tools
  (`tools.sessions.visibility`, `tools.agentToAgent`, sandboxing, agents, the main key);
* `visibility`: the requester context and the row checker, with OpenClaw's denial
  messages; `targets`: which session a named key is for a requester; `roster`: the
  sessions a store holds, as the Gateway's `sessions.list` rows; `palette_scope`: the
  sessions the palette searches.

The tools measure byte budgets with `engine.analysis.js_json` (JavaScript's
`JSON.stringify`), which history shares from below. The rules follow the real OpenClaw
2026.9.6 (`openclaw` npm package), read in its bundle (`session-visibility-*.mjs`,
`sessions-helpers-*.mjs`, `sessions-search-tool`) where behaviour.md §11 gives only the
start of a message; behaviour.md and the seed win where they say more.

Must not touch: any backend's internals (a tool calls the typed store capabilities of
`engine.backends.protocol` only, so every backend answers alike), or how history pages
are cut (`engine.history`).
"""
