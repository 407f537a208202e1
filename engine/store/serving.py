"""What a process that serves a store until its input ends (`serve`) sets up once.

Owns: `compile_when_first_needed`, the choice a long-running reader makes for the text
analysis it repeats on every answer. Must not touch: how text is analysed (the tokens
are the analyzer's, `engine.analysis`), the protocol (`engine.rpc`), or the store.

Why here: the RPC layer may not import the analysis layer, and the store layer is the
one that hands a served backend its analyzer (`SEARCH_PROFILE`).
"""

from __future__ import annotations


def compile_when_first_needed() -> None:
    """Make the search profile's unicode61 tokenizer compile its non-ASCII patterns for
    the first non-ASCII text it meets (an excerpt's, a query's), instead of walking the
    first `CLEAR_WALK_BUDGET` characters of such text one at a time.

    Why: walking before compiling (`CompiledTokenizer.walks_instead`) is the rule of
    renting until the rent would have bought, right for a command that cuts a few
    excerpts and ends; a server answers until its input ends, so it buys at once, and
    its first answers holding non-ASCII rows no longer each walk them. The tokens are
    the same either way (the walk is the patterns' oracle).
    """
    from engine.analysis.profiles import SEARCH_PROFILE
    from engine.analysis.unicode61_options import Unicode61Options
    from engine.analysis.unicode61_patterns import compile_options

    options = getattr(SEARCH_PROFILE.analyzer(), "options", None)
    if isinstance(options, Unicode61Options):
        compile_options(options).clear_budget = 0
