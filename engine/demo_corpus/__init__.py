"""The demo corpus: the hand-written transcripts that `session-search demo` imports.

Owns: the data files beside this module, `sessions.jsonl` and
`transcripts/<sessionId>.jsonl`: a corpus directory in the form `corpora/README.md`
documents (which also lists every window and what it exercises, and their provenance).
Must not touch: anything else. This package holds no code but `DEMO_CORPUS`, the folder's
path (re-exported by the front door, `engine.DEMO_CORPUS`); `engine.cli.demo_command`
finds it through `importlib.resources` and imports it like any corpus.

Why the corpus lives inside the package and not in the top-level `corpora/` folder: the
demo must work from an installed package (`pip install .`, then `session-search demo`
from any directory), and a wheel holds only what lies inside its packages, so the files
ship as package data (`[tool.setuptools.package-data]` in `pyproject.toml`). The other
ways setuptools offers do not serve both an installed package and a source checkout:
mapping `corpora/demo` into the package with `package-dir` leaves a checkout that is
not installed without `engine.demo_corpus`, and `data-files` land under an installation
prefix that no code can find reliably. `corpora/` keeps the README, the generator of
large corpora and their cache.
"""

from pathlib import Path

#: The demo corpus folder (a corpus directory, as `import` reads it).
DEMO_CORPUS = Path(__file__).resolve().parent
