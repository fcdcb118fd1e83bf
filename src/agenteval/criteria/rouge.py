"""`response_match_score`: ROUGE-1 F-measure between expected and actual final responses.

Tokenisation follows ADK 2.13.0 exactly: NFKC and lower-casing; every character that is not
alphanumeric or a combining mark separates words; each CJK ideograph, kana and Hangul syllable
is a token of its own; Thai, Lao, Khmer and Myanmar split into grapheme clusters (a base
character with its marks); ASCII words go through the `rouge-score` reference tokenizer
(Porter stemming of words longer than three letters); other words are kept whole, unstemmed.

The tokens of each whitespace-separated chunk of the text as given (and of each ASCII word) are
memoised, which is where the speed over ADK comes from: the Porter stemmer, normalisation and the
per-character walk of non-ASCII text dominate ROUGE's cost, and agent responses reuse a small
vocabulary.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import types
import unicodedata
from collections import _count_elements  # type: ignore[attr-defined]
from functools import cache, lru_cache, partial
from itertools import chain
from typing import Any

from agenteval.criteria.base import InvocationScore, PerInvocationCriterion
from agenteval.lazy import while_waiting
from agenteval.schema import BaseCriterion, Content, Invocation, content_text


def _import_rouge_tokenizers() -> Any:
    """Imports `rouge_score.tokenizers` without running `nltk/__init__`.

    rouge-score needs only NLTK's Porter stemmer, but importing `nltk.stem` first runs the
    package's `__init__`, which loads most of NLTK (and SciPy when installed): measured at
    1.7–2.5 s of every command's start-up, against 11 ms for the stemmer alone. When NLTK is not
    imported yet, bare parent packages stand in for `nltk` and `nltk.stem` during the import;
    afterwards every `nltk` entry is removed from `sys.modules`, so a later `import nltk` by
    anyone loads the real package as usual (the stemmer module stays referenced by rouge-score).
    """
    if "nltk" in sys.modules or "rouge_score.tokenizers" in sys.modules:
        return importlib.import_module("rouge_score.tokenizers")
    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        return importlib.import_module("rouge_score.tokenizers")
    root = next(iter(spec.submodule_search_locations))
    for name, path in (("nltk", root), ("nltk.stem", os.path.join(root, "stem"))):
        package = types.ModuleType(name)
        package.__path__ = [path]
        sys.modules[name] = package
    try:
        return importlib.import_module("rouge_score.tokenizers")
    finally:
        for name in [n for n in sys.modules if n == "nltk" or n.startswith("nltk.")]:
            del sys.modules[name]


@cache
def _reference_tokenizer() -> Any:
    """rouge-score's stemming tokenizer, made at first use: its import (NLTK's Porter stemmer and
    the `regex` package) is 3.5% of `eval`'s start-up, and the first call does not need it; a
    run's `ResponseMatchScore` has it made while the run first waits on a model."""
    return _import_rouge_tokenizers().DefaultTokenizer(use_stemmer=True)


_ASCII_SEPARATORS = re.compile(r"[^a-z0-9]+")

# Character kinds for the non-ASCII path.
_SEP, _WORD, _ALONE, _CLUSTER_BASE, _CLUSTER_MARK = range(5)


@lru_cache(maxsize=65536)
def _ascii_word_tokens(word: str) -> tuple[str, ...]:
    return tuple(_reference_tokenizer().tokenize(word))


@lru_cache(maxsize=65536)
def _kind(char: str) -> int:
    code = ord(char)
    is_mark = unicodedata.category(char).startswith("M")
    if (
        0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
    ):
        return _ALONE
    if 0x0E00 <= code <= 0x0EFF or 0x1780 <= code <= 0x17FF or 0x1000 <= code <= 0x109F:
        # Thai, Lao, Khmer, Myanmar: written without spaces, split into grapheme clusters.
        return _CLUSTER_MARK if is_mark else _CLUSTER_BASE
    if char.isalnum() or is_mark:
        return _WORD
    return _SEP


def _words(text: str) -> list[str]:
    """Splits normalised text into words, before ASCII words are stemmed."""
    if text.isascii():
        return _ASCII_SEPARATORS.split(text)
    pieces: list[str] = []
    for char in text:
        kind = _kind(char)
        if kind in (_WORD, _CLUSTER_MARK):
            pieces.append(char)
        elif kind == _SEP:
            pieces.append(" ")
        elif kind == _ALONE:
            pieces.append(f" {char} ")
        else:  # _CLUSTER_BASE starts a new cluster
            pieces.append(" " + char)
    return "".join(pieces).split()


def _piece_tokens(piece: str) -> list[str]:
    """Tokens of one whitespace-free piece of normalised text."""
    tokens: list[str] = []
    for word in _words(piece):
        if not word:
            continue
        if word.isascii():
            tokens.extend(_ascii_word_tokens(word))
        else:
            tokens.append(word)
    return tokens


_CHUNKS_MAX = 1 << 17
_chained = chain.from_iterable


class _ChunkTokens(dict[str, tuple[str, ...]]):
    """The tokens of each whitespace-free chunk of a text as given, before normalisation: read
    as `_chunk_tokens[chunk]` (a dict look-up in C; made by `__missing__` on the first read,
    and all forgotten when `_CHUNKS_MAX` are held).

    A text's tokens are its raw chunks' tokens in turn, because normalising and lower-casing
    never join or split text across whitespace: every whitespace character normalises to
    whitespace (NFKC), is a starter that no canonical composition takes in (only U+2000 and
    U+2001 decompose, each to another space), and ends the context of a final sigma when
    lower-casing. A chunk's normalised text may hold whitespace of its own (U+00A8 `¨` is
    ` ̈` under NFKC), so it is split again."""

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        if len(self) >= _CHUNKS_MAX:
            self.clear()
        text = chunk.lower() if chunk.isascii() else unicodedata.normalize("NFKC", chunk).lower()
        tokens = self[chunk] = tuple(_chained(map(_piece_tokens, text.split())))
        return tokens

    def cache_clear(self) -> None:
        """Forgets every chunk (as `functools.lru_cache`'s, for the benches' cold runs)."""
        self.clear()


_chunk_tokens = _ChunkTokens()
_chunk = _chunk_tokens.__getitem__


def tokenize(text: str) -> list[str]:
    """ROUGE tokens of a text, as ADK 2.13.0's Unicode-aware tokenizer produces them: NFKC,
    lower case, then split (`_words`, `_ascii_word_tokens`), done once per distinct chunk."""
    # Whitespace separates words whatever surrounds it, so a text's tokens are its
    # whitespace-separated chunks' tokens in turn (`_ChunkTokens`); chunks repeat across
    # responses. One C-level pass over the chunks, without normalising the whole text (which
    # was a third of tokenising a response of the bench corpus).
    return list(_chained(map(_chunk, text.split())))


def rouge1_scores(candidate: str, reference: str) -> tuple[float, float, float]:
    """ROUGE-1 (precision, recall, F-measure) of a candidate text against a reference text."""
    pred_tokens, ref_tokens = tokenize(candidate), tokenize(reference)
    # The size of the multiset intersection, as `sum((Counter(pred) & Counter(ref)).values())`:
    # each candidate token takes one of the reference's while any is left. One plain dict,
    # counted in C by the helper `Counter` itself uses (without its constructor's Python-level
    # checks), and one loop: 2.2 µs a pair of the bench corpus, against 3.6 µs with two Python
    # loops and about 10 µs with two Counters.
    left: dict[str, int] = {}
    _count_elements(left, ref_tokens)
    overlap = 0
    for token in pred_tokens:
        if n := left.get(token):
            overlap += 1
            left[token] = n - 1
    precision = overlap / max(len(pred_tokens), 1)
    recall = overlap / max(len(ref_tokens), 1)
    if precision + recall > 0:
        return precision, recall, 2 * precision * recall / (precision + recall)
    return precision, recall, 0.0


def rouge1_fmeasure(candidate: str, reference: str) -> float:
    """ROUGE-1 F-measure of a candidate text against a reference text."""
    return rouge1_scores(candidate, reference)[2]


class ResponseMatchScore(PerInvocationCriterion):
    """`response_match_score`: ROUGE-1 F of the actual against the expected final response.

    Text is every text part joined by newlines, thought parts included (as ADK does). Reason per
    invocation: `ROUGE-1 F 0.667 < threshold 0.8 (precision 0.75, recall 0.6)`.
    """

    reusable = True  # nothing of a case is kept

    criterion_model = BaseCriterion

    def __init__(self, metric_name: str, criterion: BaseCriterion) -> None:
        super().__init__(metric_name, criterion)
        while_waiting(_reference_tokenizer)

    def score_pair(self, actual: Invocation, expected: Invocation) -> float:
        return rouge1_fmeasure(
            content_text(actual.final_response), content_text(expected.final_response)
        )

    def assess_pair(self, actual: Invocation, expected: Invocation) -> InvocationScore:
        p, r, f = rouge1_scores(_text(actual.final_response), _text(expected.final_response))
        # A partial, not a closure (one object and its arguments instead of a function, its
        # cells and their tuple, which a large run's collector walks), positionally.
        return InvocationScore(f, None, None, partial(_reason, f, self.criterion.threshold, p, r))


def _text(content: Content | None) -> str:
    """`content_text(content)` (thoughts included), inlined: two calls and a generator fewer
    per response, on the path that scores every invocation."""
    if content is None or not content.parts:
        return ""
    return "\n".join([p.text for p in content.parts if p.text])


def _reason(f: float, threshold: float, p: float, r: float) -> str:
    # `held_to(f, threshold, "ROUGE-1 F")` and `num` of each, written out (three calls fewer
    # for a reason that most cases make).
    sign = "≥" if f >= threshold else "<"
    return (f"ROUGE-1 F {f:.4g} {sign} threshold {threshold:.4g} (precision {p:.4g}, "
            f"recall {r:.4g})")
