"""The agent tools: what an agent calls, bounded and shaped for a model to read.

`sessions_search` (this issue's tool) searches the sessions a requester may see and
answers within the product's count, excerpt, byte and time bounds. Modules:

* `sessions_search`: arguments, targets, kernel calls, hit shape, order and budgets;
* `budgets`: the 90 s request and 60 s reader budgets and the reader's admission;
* `json_size`: JavaScript's `JSON.stringify`, on which the byte budget is measured.

Must not touch: visibility rules (`engine.access`) and any backend's internals (a tool
calls the typed store capabilities only, so every backend answers alike).
"""
