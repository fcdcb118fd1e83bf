import pytest

from agenteval.criteria.rouge import rouge1_fmeasure, tokenize


@pytest.mark.parametrize(("candidate", "reference", "expected"), [
    ("The cats are running", "the cat ran", 4 / 7),
    ("1,000,000", "1000000", 0.0),
    ("", "", 0.0),
    ("anything", "", 0.0),
    ("b a", "a b", 1.0),
])
def test_rouge1_f(candidate: str, reference: str, expected: float) -> None:
    assert rouge1_fmeasure(candidate, reference) == pytest.approx(expected)


def test_tokenizer_follows_unicode_rules() -> None:
    assert tokenize("Running don't user_name") == ["run", "don", "t", "user", "name"]
    assert tokenize("東京へ") == ["東", "京", "へ"]
    assert tokenize("café cafe") == ["café", "cafe"]  # no accent folding, non-ASCII not stemmed
    assert tokenize("ﬁnding ①") == ["find", "1"]  # NFKC first
    assert tokenize("สวัสดี") == ["ส", "วั", "ส", "ดี"]  # Thai grapheme clusters


@pytest.mark.parametrize("text", [
    "Hello, wörld! 東京へ 行く", "สวัสดี ั ครับ", "a\u00a0b\u3000c\u2028d", "x\u0301 \u0301y",
    "Grüße—running, runs; ran.", "ABC\tdef\nGHI  ＡＢＣ", "",
])
def test_chunked_tokens_equal_tokens_of_the_whole_text(text: str) -> None:
    import unicodedata

    from agenteval.criteria.rouge import _ascii_word_tokens, _words

    normal = unicodedata.normalize("NFKC", text).lower()
    whole = [t for w in _words(normal) if w
             for t in (_ascii_word_tokens(w) if w.isascii() else (w,))]
    assert tokenize(text) == whole


def test_overlap_is_the_multiset_intersection() -> None:
    # Repeated tokens on either side: each candidate token counts while the reference has one.
    import random
    from collections import Counter

    from agenteval.criteria.rouge import rouge1_scores, tokenize

    rng = random.Random(3)
    words = ["ship", "shipped", "order", "a", "the", "42", "é", "東京"]
    for _ in range(500):
        cand = " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
        ref = " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
        p, r = tokenize(cand), tokenize(ref)
        overlap = sum((Counter(p) & Counter(r)).values())
        precision, recall, _ = rouge1_scores(cand, ref)
        assert (precision, recall) == (overlap / max(len(p), 1), overlap / max(len(r), 1))
