"""Fixtures of the access tests: each test that touches a store runs on both backends.

The fixtures live in `tests.tools.stores`, shared with the agent-tool tests.
"""

from tests.tools.stores import backend_name, make_store

__all__ = ["backend_name", "make_store"]
