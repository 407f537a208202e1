"""The internal values every search makes a class of are not frozen dataclasses (issue 33,
item 5): a dataclass's class costs many times a NamedTuple's or a plain slotted class's
to make, and a fresh search pays for every class of every module it imports. They still
behave as the dataclasses did where a caller can tell: fields by name and keyword,
equality (without the fields the dataclass left out; of their own kind only for the
values compared with others, `Phrase`, `Manifest` and the slotted classes, while
`Token`, `ProfileConfig` and `Unicode61Options` also equal a plain tuple of their
values, which nothing compares them with), hash, repr, immutability and class patterns.

`WindowIndexState` is a NamedTuple rebuilt with `_replace`. The public values of
`engine.model` and `EngineConfig` stay dataclasses: they are rebuilt with
`dataclasses.replace` or read with `dataclasses.fields` (the log and catalog codecs,
ingest, the stores, the tests)."""

from __future__ import annotations

import copy
import dataclasses
import operator
import pickle

import pytest

from engine.analysis.profiles import SEARCH_PROFILE, ProfileConfig
from engine.analysis.token import Token
from engine.analysis.unicode61_options import Unicode61Options, resolve_options
from engine.codec.manifest_file import Manifest, decode_manifest, encode_manifest
from engine.config import EngineConfig
from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import WindowIndexState
from engine.index.row_columns import RowColumns
from engine.index.view import IndexView
from engine.model import IndexEntry, SearchRequest
from engine.query.ast import Phrase, QueryPlan
from engine.query.checked_request import CheckedRequest, check_request
from engine.query.pg_tsquery import PgPhrase
from engine.search.scope import Scope

NAMED_TUPLES = (Token, Phrase, ProfileConfig, Unicode61Options, Manifest, WindowIndexState)
SLOTTED_CLASSES = (QueryPlan, Scope, RowColumns, IndexView, CheckedRequest)


@pytest.mark.parametrize("value_class", NAMED_TUPLES + SLOTTED_CLASSES,
                         ids=lambda cls: cls.__name__)
def test_no_dataclass_is_made_for_them(value_class: type) -> None:
    # a dataclass keeps its parameters in its own class dictionary
    assert "__dataclass_params__" not in vars(value_class)
    if value_class in NAMED_TUPLES:
        assert issubclass(value_class, tuple) and hasattr(value_class, "_fields")
    else:
        assert "__slots__" in vars(value_class) and "__dict__" not in dir(value_class)


def test_a_window_state_reads_and_rebuilds_as_before() -> None:
    state = WindowIndexState(4, "m5")
    assert (state.indexed_seq, state.leaf_event_id, state.needs_rebuild) == (4, "m5", False)
    assert state._replace(needs_rebuild=True) == WindowIndexState(4, "m5", True) != state
    assert repr(WindowIndexState()) == (
        "WindowIndexState(indexed_seq=-1, leaf_event_id=None, needs_rebuild=False)")
    assert hash(state) == hash(WindowIndexState(indexed_seq=4, leaf_event_id="m5"))


def test_the_values_rebuilt_or_read_as_dataclasses_stay_dataclasses() -> None:
    assert dataclasses.replace(EngineConfig(), fast_kernel=False).fast_kernel is False
    assert dataclasses.fields(SearchRequest)[0].name == "query"


def test_a_phrase_equals_only_a_phrase() -> None:
    phrase = Phrase(("per", "session"), prefix=True)
    assert phrase == Phrase(("per", "session"), True) and hash(phrase) == hash(tuple(phrase))
    assert not operator.ne(phrase, Phrase(("per", "session"), True))
    for other in (("per", "session"), True), PgPhrase(("per", "session"), True):
        assert operator.ne(phrase, other) and not operator.eq(phrase, other)
        assert phrase not in {other}
    assert repr(phrase) == "Phrase(terms=('per', 'session'), prefix=True)"
    with pytest.raises(AttributeError):
        phrase.prefix = False  # type: ignore[misc]


def test_a_plan_reads_compares_and_prints_as_before() -> None:
    plan = QueryPlan((Phrase(("a",)), Phrase(("b",))))
    assert plan == QueryPlan(phrases=(Phrase(("a",)), Phrase(("b",))), substrings=())
    assert hash(plan) == hash(QueryPlan((Phrase(("a",)), Phrase(("b",)))))
    assert plan != QueryPlan((Phrase(("a",)),)) and plan != (plan.phrases, ())
    assert not plan.matches_nothing and QueryPlan(()).matches_nothing
    assert QueryPlan((Phrase(()),)).matches_nothing
    assert repr(plan) == ("QueryPlan(phrases=(Phrase(terms=('a',), prefix=False), "
                          "Phrase(terms=('b',), prefix=False)), substrings=())")
    match plan:
        case QueryPlan(phrases=(first, _), substrings=()):
            assert first.terms == ("a",)
        case _:
            pytest.fail("a plan matches its class pattern")
    for name in ("phrases", "matches_nothing"):
        with pytest.raises(AttributeError):
            setattr(plan, name, ())
        with pytest.raises(AttributeError):
            delattr(plan, name)


def test_a_scope_leaves_what_it_derived_out_of_equality() -> None:
    scope = Scope({"w1": "global"}, 2)
    assert scope.derived == {} and scope.derived is not Scope({}, 0).derived
    scope.derived["mask"] = 1
    assert scope == Scope({"w1": "global"}, 2) and scope != Scope({"w1": "global"}, 1)
    assert scope != ({"w1": "global"}, 2)
    assert repr(scope) == "Scope(session_keys={'w1': 'global'}, archived_excluded=2)"
    with pytest.raises(AttributeError):
        scope.archived_excluded = 0  # type: ignore[misc]


def test_a_manifest_leaves_its_runs_out_of_equality() -> None:
    written = Manifest(7, 9, "unicode61", (("segment-000001", 0, 8, 6),), (2, 3, 4),
                       (("w1", 4, None, False),), (6, 30), None, True)
    read = decode_manifest(encode_manifest(written), "manifest")
    assert read.deleted_runs == (range(2, 5),) and written.deleted_runs is None
    assert read == written and not operator.ne(read, written) and hash(read) == hash(written)
    assert read != read._replace(indexing=False) and read != tuple(read)
    assert read != read._replace(windows=())


def test_token_profile_and_options_read_as_before() -> None:
    token = Token("cafe", 0, 0, 4, 0, 5)
    assert token.kind == "word" and token == Token(text="cafe", position=0, start=0, end=4,
                                                   byte_start=0, byte_end=5, kind="word")
    assert repr(token) == ("Token(text='cafe', position=0, start=0, end=4, byte_start=0, "
                           "byte_end=5, kind='word')")
    assert SEARCH_PROFILE == ProfileConfig("unicode61", (("remove_diacritics", 2),))
    assert SEARCH_PROFILE.label() == "unicode61 remove_diacritics=2"
    options = resolve_options(2, "", "", None)
    assert options == resolve_options(2, "", "", None)
    assert hash(options) == hash(resolve_options(2, "", "", None))
    assert options != resolve_options(1, "", "", None) and options.starts_token(ord("a"))


def test_a_checked_request_reads_compares_and_prints_as_before() -> None:
    checked = check_request(SearchRequest("  Café  ", agent_id="ops", limit=40))
    assert isinstance(checked, SearchRequest) and dataclasses.is_dataclass(checked)
    assert (checked.trimmed_query, checked.page_limit, checked.query) == ("Café", 25, "  Café  ")
    same = CheckedRequest("  Café  ", "ops", 40, None, None, None, "exact", "relevance",
                          "Café", 25)
    assert checked == same and hash(checked) == hash(same)
    assert checked != SearchRequest("  Café  ", agent_id="ops", limit=40)
    assert SearchRequest("  Café  ", agent_id="ops", limit=40) != checked
    assert checked != CheckedRequest("  Café  ", "ops", 40, None, None, None, "exact",
                                     "relevance", "Café", 24)
    narrowed = checked.narrowed(("agent:ops:x",), 3)
    assert (narrowed.session_keys, narrowed.limit, narrowed.page_limit) == (("agent:ops:x",),
                                                                            3, 3)
    assert narrowed.trimmed_query == "Café" and narrowed.agent_id == "ops"
    assert repr(checked) == (
        "CheckedRequest(query='  Café  ', agent_id='ops', limit=40, session_keys=None, "
        "session_id=None, role=None, match='exact', order='relevance', "
        "trimmed_query='Café', page_limit=25)")
    for name in ("query", "page_limit", "trimmed_query"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(checked, name, "x")
    match checked:
        case CheckedRequest(query, "ops", trimmed_query="Café"):
            assert query == "  Café  "
        case _:
            pytest.fail("a checked request matches its class pattern")
    # `fields` names only a plain request's: a replace must not blank the checked ones
    with pytest.raises(TypeError, match="trimmed_query"):
        dataclasses.replace(checked, session_keys=())


def test_row_columns_and_views() -> None:
    assert RowColumns() == RowColumns() and RowColumns(dead=1) != RowColumns()
    assert RowColumns()._role_sessions == {}
    assert RowColumns(_role_sessions=None)._role_sessions is None
    with pytest.raises(TypeError):
        hash(RowColumns())
    assert repr(RowColumns()).startswith("RowColumns(lengths=array('I'), groups=array('I'), ")
    index = InvertedIndex()
    index.add_entry(IndexEntry("w1", "m1", "user", 5.0, "a b", 0), ["a", "b"])
    view = index.view()
    other = IndexView(index, view.version, RowColumns())  # equal only to itself
    assert operator.eq(view, view) and view != other and hash(view) == object.__hash__(view)
    with pytest.raises(AttributeError):
        view.version = (0, 0, 0, 0)  # type: ignore[misc]
    assert list(other.rows.lengths) == [2]


def test_they_copy_and_pickle_as_the_dataclasses_did() -> None:
    checked = check_request(SearchRequest("  Café  ", limit=40))
    values = [QueryPlan((Phrase(("a",)),)), QueryPlan((Phrase(()),)), Scope({"w1": "global"}, 1),
              checked, checked.narrowed(("k",), 3), RowColumns(dead=2), Phrase(("a",), True),
              Token("a", 0, 0, 1, 0, 1), SEARCH_PROFILE, resolve_options(2, "", "", None),
              Manifest(1, 2, "p", (), (3,), (), None, (range(3, 4),), True)]
    for value in values:
        for again in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
            assert again.__class__ is value.__class__ and again == value
    assert copy.copy(values[1]).matches_nothing and not copy.copy(values[0]).matches_nothing
    assert repr(pickle.loads(pickle.dumps(checked))) == repr(checked)
    index = InvertedIndex()
    index.add_entry(IndexEntry("w1", "m1", "user", 5.0, "a b", 0), ["a", "b"])
    view = index.view()
    shallow = copy.copy(view)  # a view equals only itself; a copy shares what it holds
    assert shallow != view and shallow.version == view.version and shallow.rows is view.rows
