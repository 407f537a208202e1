"""`event_timestamp` reads a `str` timestamp first (the common case, no finiteness
check: a parsed date is always finite); it must answer as `clear_event_timestamp`, the
rule read clearly, for every timestamp (numbers, other types, `str` subclasses too)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.transcript.projection import clear_event_timestamp, event_timestamp


class _Text(str):
    pass


_STAMPS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**1100), 2**1100), st.floats(),
    st.text(alphabet="0123456789-T:.Z +", max_size=26),
    st.builds("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z".format,
              st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32),
              st.integers(0, 25), st.integers(0, 60), st.integers(0, 60),
              st.integers(0, 999)),
).flatmap(lambda stamp: st.sampled_from(
    [stamp, _Text(stamp)] if isinstance(stamp, str) else [stamp]))


@settings(max_examples=1500)
@given(_STAMPS, st.integers(0, 2**40))
def test_event_timestamp_reads_as_the_clear_rule(stamp: Any, fallback: int) -> None:
    event = {"timestamp": stamp}
    assert event_timestamp(event, fallback) == clear_event_timestamp(event, fallback)
    assert event_timestamp({}, fallback) == float(fallback)
