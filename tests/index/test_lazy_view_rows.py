"""A view fills its row columns the first time a query reads them, not when it is made,
unless the write buffer holds rows they lack (issue 33, item 5): a fresh one-word search
for a word the index does not hold fills none.

Oracle: views that fill their columns when made (`IndexView.fill_rows_at_view`, what every
view did before), over the same changes, reloads and queries: the same results and the
same columns of every live row.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.loading import load_index
from engine.index.view import IndexView
from engine.index.writer import flush_index
from engine.model import SearchRequest
from engine.query.checked_request import check_request
from engine.search import kernel
from tests.search.test_fast_path import (
    ANALYZER,
    CONFIG,
    PROFILE,
    WINDOWS,
    Corpus,
    changes,
    requests,
    rows,
)


def view_of(corpus: Corpus, eager: bool) -> IndexView:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(IndexView, "fill_rows_at_view", eager)
        return corpus.index.view()


def live_columns(view: IndexView) -> list[tuple]:
    columns = view.rows
    return [(doc_id, columns.lengths[doc_id], columns.timestamps[doc_id],
             columns.group_sessions[columns.groups[doc_id]],
             columns.group_roles[columns.groups[doc_id]])
            for doc_id in view.live_doc_ids()]


def reload(corpus: Corpus) -> None:
    flush_index(corpus.directory, corpus.index, PROFILE, CONFIG)
    corpus.index = load_index(corpus.directory, PROFILE, config=CONFIG)


steps = st.lists(st.tuples(st.one_of(changes, st.just(("reload", None))), requests,
                           st.booleans()), min_size=1, max_size=5)


@settings(max_examples=80, deadline=None)
@given(st.lists(rows, min_size=4, max_size=30), steps)
def test_lazy_columns_answer_as_eager_ones(initial, steps):
    lazy, eager = Corpus(), Corpus()
    for corpus in (lazy, eager):
        for row in initial:
            corpus.add(row)
    for change, request, query in steps:
        for corpus in (lazy, eager):
            if change[0] == "reload":
                reload(corpus)
            else:
                corpus.apply(change)
        if not query:  # a view made and not read before the next change
            view_of(lazy, False)
            view_of(eager, True)
            continue
        runs = [kernel.run_kernel(view_of(corpus, corpus is eager), WINDOWS,
                                  check_request(request), ANALYZER)
                for corpus in (lazy, eager)]
        results = [kernel.result_of_run(run, ANALYZER, indexing=False) for run in runs]
        assert results[0] == results[1]
    assert live_columns(view_of(lazy, False)) == live_columns(view_of(eager, True))


def test_a_search_for_a_word_the_index_lacks_fills_no_column():
    corpus = Corpus()
    for number in range(6):
        corpus.add((WINDOWS[(0, 1, 3)[number % 3]].session_id, "the saffron ballast", float(number),
                    "user"))
    reload(corpus)
    view = view_of(corpus, False)
    missing = kernel.run_kernel(view, WINDOWS, check_request(SearchRequest("quokka")), ANALYZER)
    assert missing.rows == ()
    assert view._rows.covered == 0  # nothing read yet
    found = kernel.run_kernel(view, WINDOWS, check_request(SearchRequest("saffron")), ANALYZER)
    assert len(found.rows) == 6 and view._rows.covered == 6


def test_a_buffered_row_is_filled_when_the_view_is_made():
    corpus = Corpus()
    corpus.add(("w1", "the saffron", 1.0, "user"))
    view = view_of(corpus, False)
    assert view._rows.covered == 1  # its record may be deleted before the first read
