"""The teaching wing: what the teaching views read of the stages below.

The command line's teaching commands (`tokenize`, `explain`, the readable `history` and
`ui-search` views) and the explorer (`engine.explorer`) show the stages' own values: an analysis
profile's tokens, a query's plan, bm25's terms, an excerpt's choice, a history page's row
kinds. They reach them here, so that the command line imports only the front door and
the wings (`tests/test_layers.py`). Modules:

* `tokens`: the analysis profiles, their options, and the tokens a profile makes;
* `explanations`: the values of an explanation (plan, phrases, bm25 terms, excerpt
  choice, the hit explained, the partition that scored it);
* `history_rows`: what a history page's rows are (their kinds, seqs, the view they come
  from) and the rows a reader leaves out (tool rows);
* `text_matches`: where a query's terms are in a text that carries no spans of its own;
* `no_hits`: why a search found nothing, when the query's own words say why (an empty
  phrase, a `*` that is no wildcard, an operator word that is literal);
* `query_plans`: a query's plan as the policy makes it, with plain-language warnings;
* `hit_order`: which criterion of the merge order put each hit above the next;
* `excerpt_bounds`: an excerpt against the store's 500-unit bound, and JSON's byte measure;
* `index_facts`: a term's postings per partition, a row's tokens, segments and generations.

Must not touch: any rule (each is the stage's own; a name here is the stage's value, not
a copy), and printing (the command line's).
"""
