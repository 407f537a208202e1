"""The query stage: from the user's raw string to a plan of phrases and substrings.

Modules, read in this order:
* `ast` — the immutable plan values (`Phrase`, `QueryPlan`), and `substring_term` the
  plan's CJK substrings (`SubstringTerm`);
* `user_query` — the product query policy of behaviour.md §4 (trim, UTF-16 length limit,
  JavaScript whitespace split, one quoted phrase per term, explicit AND, final prefix);
* `phrase_match` — the naive phrase matcher, the test oracle for every fast matcher;
* `cjk` — the CJK substring retry of behaviour.md §7.1 and the SQLite `LIKE` semantics both
  backends share.

This package decides *what* a query means; it never reads an index, a store or SQL.
"""
