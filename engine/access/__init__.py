"""Who may see which session: the requester, the configuration, the roster, the row checker.

The agent tools (`engine.tools`), the Control UI search and, later, the history reader
ask this package one question: which sessions may this requester read? It answers from
three things only, each a module:

* `session_keys`: what a session key says by its shape (agent-scoped, incognito, a
  subagent or ACP child, a sessionId rather than a key);
* `tool_config`: the part of an OpenClaw configuration file that governs session tools
  (`tools.sessions.visibility`, `tools.agentToAgent`, the sandbox's spawned-session
  visibility, the agents, the main key), read strictly;
* `visibility`: the requester context and the row checker, with OpenClaw's denial
  messages;
* `roster`: the sessions a store holds, as the Gateway's `sessions.list` rows (key, owning
  agent, ownership metadata), read through the typed transcript reader;
* `palette_scope`: the sessions the Control UI's command palette searches (configured
  agents' chats and grouped agent-created conversations; no child runs, cron, system,
  dock, unscoped, incognito or archived sessions).

Must not touch: searching, excerpts or byte budgets (the tools own them) and any backend's
internals (the roster reads `TranscriptReader` only).

The rules follow the real OpenClaw 2026.9.6 (`openclaw` npm package), read in its bundle
(`session-visibility-*.mjs`, `sessions-helpers-*.mjs`, `sessions-search-tool`), where
behaviour.md §11 gives only the start of a message; behaviour.md and the seed win where
they say more.
"""
