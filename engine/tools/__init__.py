"""The agent tools and the Control UI search: what an agent or a person calls, bounded.

`sessions_search` searches the sessions a requester may see and answers within the
product's count, excerpt, byte and time bounds; `ui_search` is the command palette's
search (titles, then transcripts in prefix mode). Modules:

* `sessions_search`: arguments, targets, kernel calls, hit shape, order and budgets;
* `budgets`: the 90 s request and 60 s reader budgets and the reader's admission;
* `title_match`: the palette's title normaliser (words, folding, literal identifiers);
* `ui_search`: the Control UI's command palette search;
* `history_access`: the same visibility for `sessions_history` (history's seam).

Both tools measure byte budgets with `engine.analysis.js_json` (JavaScript's
`JSON.stringify`), which history shares from below.

Must not touch: visibility rules (`engine.access`) and any backend's internals (a tool
calls the typed store capabilities only, so every backend answers alike).
"""
