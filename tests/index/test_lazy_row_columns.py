"""Row columns copied from a segment's table when each column is first read, not when the
table is numbered (`RowColumns.lazy_columns`, issue 33, item 5): a fresh one-word search
copies only the columns it reads (the lengths of bm25, the groups when a scope leaves
some out, the timestamps when ranks tie past the page).

Oracle: columns copied when each table is numbered (`lazy_columns = False`, what every
extend did before), over the same changes, flushes, reloads and queries, with any of the
columns read between them: the same results, and the same columns, placeholders included.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.row_columns import RowColumns
from engine.model import SearchRequest
from engine.query.checked_request import check_request
from engine.search import kernel
from tests.index.test_lazy_view_rows import reload
from tests.search.test_fast_path import ANALYZER, WINDOWS, Corpus, changes, requests, rows

NAMES = ("lengths", "groups", "timestamps")


@contextmanager
def copying(lazy: bool):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RowColumns, "lazy_columns", lazy)
        yield


def whole_columns(columns: RowColumns) -> tuple:
    return (columns.covered, *(list(getattr(columns, name)) for name in NAMES),
            columns.odd_timestamps, columns.group_sessions, columns.group_roles)


steps = st.lists(st.tuples(st.one_of(changes, st.just(("reload", None))), requests,
                           st.booleans(), st.sets(st.sampled_from(NAMES))),
                 min_size=1, max_size=6)


@settings(max_examples=80, deadline=None)
@given(st.lists(rows, min_size=4, max_size=30), steps)
def test_columns_copied_when_read_are_the_columns_copied_at_once(initial, steps):
    lazy, eager = Corpus(), Corpus()
    for corpus in (lazy, eager):
        with copying(corpus is lazy):
            for row in initial:
                corpus.add(row)
    for change, request, query, read in steps:
        results = []
        for corpus in (lazy, eager):
            with copying(corpus is lazy):
                if change[0] == "reload":
                    reload(corpus)
                else:
                    corpus.apply(change)
                view = corpus.index.view()
                for name in sorted(read):  # some columns read now, the others later
                    getattr(view.rows, name)
                if query:
                    run = kernel.run_kernel(view, WINDOWS, check_request(request), ANALYZER)
                    results.append(kernel.result_of_run(run, ANALYZER, indexing=False))
        assert results[:1] == results[1:]
    with copying(True):
        lazy_columns = whole_columns(lazy.index.view().rows)
    with copying(False):
        assert lazy_columns == whole_columns(eager.index.view().rows)


def test_a_one_word_search_copies_no_timestamp_when_nothing_ties():
    corpus = Corpus()
    for number in range(6):
        corpus.add((WINDOWS[0].session_id, "saffron " * (number + 1), float(number), "user"))
    reload(corpus)
    view = corpus.index.view()
    request = check_request(SearchRequest("saffron"))
    found = kernel.run_kernel(view, WINDOWS, request, ANALYZER)
    assert len(found.rows) == 6
    columns = view._rows
    assert columns.covered == 6 and columns._waiting["timestamps"]  # never read
    assert list(columns.timestamps) == [float(number) for number in range(6)]
    assert not columns._waiting["timestamps"]


@pytest.mark.parametrize("read", [(), ("timestamps",), ("groups", "lengths")])
def test_doc_ids_no_table_holds_get_placeholders_when_copied_late(read):
    corpora = {}
    for lazy in (True, False):
        corpus = corpora[lazy] = Corpus()
        with copying(lazy):
            for session_id in (WINDOWS[0].session_id, WINDOWS[1].session_id):
                for number in range(3):
                    corpus.add((session_id, "the saffron", float(number), "user"))
            corpus.apply(("delete", WINDOWS[0].session_id))  # doc ids 0-2, before any flush
            corpus.apply(("flush", None))  # a table starting at doc id 3
            for name in read:
                getattr(corpus.index.view().rows, name)
            for session_id in (WINDOWS[2].session_id, WINDOWS[3].session_id):
                for number in range(3):
                    corpus.add((session_id, "saffron ballast", float(number), "assistant"))
            corpus.apply(("delete", WINDOWS[2].session_id))  # doc ids 6-8
            corpus.apply(("flush", None))  # a table starting at doc id 9
            reload(corpus)
    with copying(True):
        lazy_columns = whole_columns(corpora[True].index.view().rows)
    with copying(False):
        eager_columns = whole_columns(corpora[False].index.view().rows)
    assert lazy_columns == eager_columns
    assert lazy_columns[0] == 12 and lazy_columns[1][:3] == [0, 0, 0]


@pytest.mark.parametrize("failing_copy", range(1, 10))
def test_a_copy_that_fails_leaves_its_part_waiting(failing_copy):
    """A column copy that raises part-way (out of memory, say) loses no table part:
    `serve` answers on after an error, and the next searches, after more rows and a
    flush, answer as a store whose copies never failed (the parts were once dropped
    from the queue before being copied, and the rows after them padded as deleted)."""
    from engine.index import row_columns

    copy = row_columns._append_from

    def store_with_three_tables() -> Corpus:
        corpus = Corpus()
        for window, words in ((0, "saffron"), (1, "saffron saffron ballast"),
                              (2, "saffron x y z")):
            for number in range(3):
                corpus.add((WINDOWS[window].session_id, words, float(number), "user"))
            corpus.apply(("flush", None))
        reload(corpus)
        return corpus

    def answer(corpus: Corpus) -> list:
        run = kernel.run_kernel(corpus.index.view(), WINDOWS,
                                check_request(SearchRequest("saffron", limit=25)), ANALYZER)
        return kernel.result_of_run(run, ANALYZER, indexing=False)

    def searched_after_a_failure(failing: int | None) -> tuple:
        corpus = store_with_three_tables()
        calls = 0

        def failing_append(*arguments):
            nonlocal calls
            calls += 1
            if calls == failing:
                raise MemoryError("injected")
            return copy(*arguments)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(row_columns, "_append_from", failing_append)
            try:
                answer(corpus)
            except MemoryError:
                pass
        for number in range(3):  # more rows in a fourth table, then search again
            corpus.add((WINDOWS[3].session_id, "saffron ballast", float(number), "user"))
        corpus.apply(("flush", None))
        return answer(corpus), whole_columns(corpus.index.view().rows)

    assert searched_after_a_failure(failing_copy) == searched_after_a_failure(None)
