"""`serve` compiles the unicode61 tokenizer's non-ASCII patterns at the first text that
needs them (`engine.store.serving.compile_when_first_needed`, called by
`engine.rpc.server.serve_stdio`) instead of walking its first `CLEAR_WALK_BUDGET`
characters of such text: the same spans, by the pattern from the first text on.
"""

from __future__ import annotations

from engine.analysis.profiles import SEARCH_PROFILE
from engine.analysis.unicode61_patterns import compile_options
from engine.store.serving import compile_when_first_needed

TEXTS = ["Café crème, per-session notes", "naïve façade — déjà vu", "会议 meeting 明天"]


def test_a_server_compiles_at_the_first_non_ascii_text_with_the_same_spans():
    analyzer = SEARCH_PROFILE.analyzer()
    compiled = compile_options(analyzer.options)
    budget = compiled.clear_budget
    try:
        compiled.clear_budget = 10**9  # every text walked: the clear spans
        walked = [analyzer.spans(text) for text in TEXTS]
        compile_when_first_needed()
        assert compiled.clear_budget == 0
        assert not any(compiled.walks_instead(text) for text in TEXTS)
        assert [analyzer.spans(text) for text in TEXTS] == walked
    finally:
        compiled.clear_budget = budget
