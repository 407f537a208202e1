"""The Analysis and Query panels: a text as each profile tokenizes it, a query as planned.

Owns: the data of the two panels that read no store: `analysis` (the text, its CJK
runs, and per profile (`unicode61` as session search configures it, `icu`, `pg`) the
stages and the tokens as `tokenize --json` writes them, plus which profiles made each
term, so the page can mark where they disagree) and `query_plan` (the policy's plan and
its warnings, `engine.inspection.query_plans`). Must not touch: tokenizing or planning
(the analysis and query stages', through the inspection wing) or HTTP (the application).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from engine.explorer.parameters import Parameter, ParameterError
from engine.inspection.query_plans import describe_query
from engine.inspection.tokens import (
    PROFILE_NAMES,
    SEARCH_PROFILE,
    ProfileConfig,
    cjk_runs,
    printable,
    token_record,
)
from engine.model import MATCH_MODES

#: The longest text the Analysis panel tokenizes (three profiles, on every keystroke).
MAX_ANALYSIS_TEXT = 8 * 1024

ANALYSIS_PARAMETERS = {
    "text": Parameter(required=True, max_length=MAX_ANALYSIS_TEXT),
    "profile": Parameter("list", max_length=32),
}
QUERY_PARAMETERS = {
    "q": Parameter(required=True),
    "match": Parameter("choice", choices=MATCH_MODES),
}


@cache
def profile_config(name: str) -> ProfileConfig:
    """The configuration a profile is shown with: session search's own for `unicode61`
    (`remove_diacritics 2`, as `tokenize` shows it), the defaults for the others.

    >>> profile_config("unicode61").label(), profile_config("icu").label()
    ('unicode61 remove_diacritics=2', 'icu')
    """
    return SEARCH_PROFILE if name == SEARCH_PROFILE.name else ProfileConfig(name)


def analysis(values: dict[str, Any]) -> dict[str, Any]:
    """The Analysis panel's data for `values` (`text`, `profile` repeatable: default all).

    >>> data = analysis({"text": "Café 会议讨论"})
    >>> [profile["profile"] for profile in data["profiles"]], data["cjkRuns"]
    (['unicode61', 'icu', 'pg'], [{'start': 5, 'end': 9, 'text': '会议讨论'}])
    >>> [(item["term"], item["profiles"]) for item in data["terms"][1:]]
    [('会议讨论', ['unicode61', 'pg']), ('会议', ['icu']), ('讨论', ['icu'])]
    """
    names = values.get("profile") or list(PROFILE_NAMES)
    for name in names:
        if name not in PROFILE_NAMES:
            raise ParameterError(f"profile must be one of: {', '.join(PROFILE_NAMES)} (got "
                                 f"{name[:40]!r})")
    text = values["text"]
    profiles = []
    made_by: dict[str, list[str]] = {}
    for name in dict.fromkeys(names):
        config = profile_config(name)
        analyzer = config.analyzer()
        tokens = [token_record(text, token) for token in analyzer.tokens(text)]
        for token in tokens:
            owners = made_by.setdefault(token["text"], [])
            if name not in owners:
                owners.append(name)
        profiles.append({"profile": name, "label": config.label(),
                         "options": dict(config.options), "stages": analyzer.describe(),
                         "tokens": tokens})
    return {
        "text": printable(text),
        "length": len(text),
        "cjkRuns": [{"start": start, "end": end, "text": printable(text[start:end])}
                    for start, end in cjk_runs(text)],
        "profiles": profiles,
        "terms": [{"term": term, "profiles": owners} for term, owners in made_by.items()],
    }


def query_plan(values: dict[str, Any]) -> dict[str, Any]:
    """The Query panel's data: the plan of `q` searched with `match` (default exact).

    >>> query_plan({"q": "deployment - failed"})["matchesNothing"]
    True
    """
    return describe_query(values["q"], values.get("match", "exact")).to_json()
