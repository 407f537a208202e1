"""The derived search index: term dictionary, postings, segments, manifest, lifecycle.

Owns: index data and the decisions about when index rows exist (lifecycle). Must not
touch: transcripts directly (the API layer feeds it entries), ranking formulas (score/),
excerpts (results/).
"""
