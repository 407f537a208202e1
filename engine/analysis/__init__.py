"""Text analysis: the three tokenizer profiles (`unicode61`, `icu`, `pg`).

Owns: turning text into tokens with positions and offsets into the original text.
Must not touch: storage, the index, scoring. This is the only package that imports ICU
(and only in the modules that say so). Filters change token text, never offsets.
`cjk_script` says which characters are CJK, for the query stage and the index alike.
"""
