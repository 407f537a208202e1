"""History: reopening a conversation around a message, across resets, within byte budgets.

The reader behind `chat.history` (the Gateway read) and `sessions_history` (the agent
tool), behaviour.md §9 and the seed's "Session search" section. It reads the stored
transcripts through `source.HistorySource` (every backend's transcript reader), never
the search index, so every backend gives the same pages.

Map of the package (each module owns one concept):

* `source.py`      — `HistorySource`, the two transcript reads history needs;
* `rows.py`        — which active-path events are rows (messages, visible boundaries) and
                     the JSON object a row is shown as;
* `views.py`       — the current view after the latest logical reset, closed intervals
                     of retained rows, where an anchor lies;
* `window_math.py` — which rows a page holds: anchored windows, offsets, cursor pages,
                     the next offset;
* `byte_caps.py`   — the Gateway's and the tool's byte budgets and placeholders;
* `sanitize.py`    — the tool's per-text truncation and tool-message stripping;
* `cursor.py`      — directional `older` / `newer` cursors and their opaque text;
* `request.py`     — `HistoryRequest`, `ToolHistoryRequest` and the parameter rules with
                     the product's error strings;
* `pages.py`       — `read_history`: one `chat.history` page (`HistoryPage`);
* `tool.py`        — `sessions_history`: the agent tool's answer, with the visibility
                     seam (`HistoryAccess`).

Import direction: `rows` ← `views`; `byte_caps` ← `request`; `window_math`,
`cursor` stand alone; `pages` uses them all; `tool` uses `pages`. The layer rule
(`tests/test_layers.py`): history imports only `transcript`, `model`, `errors`,
`config`, `analysis`, `codec` and `directory`. This `__init__` re-exports nothing.
"""
