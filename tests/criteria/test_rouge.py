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


def _whole_text_tokens(text: str) -> list[str]:
    """The tokenizer's definition on the whole text: NFKC, lower case, then words."""
    import unicodedata

    from agenteval.criteria.rouge import _ascii_word_tokens, _words

    normal = unicodedata.normalize("NFKC", text).lower()
    return [t for w in _words(normal) if w for t in (_ascii_word_tokens(w) if w.isascii() else (w,))]


def test_raw_chunks_give_the_whole_texts_tokens_around_every_whitespace_character() -> None:
    # Tokens are memoised per chunk of the text as given, before normalisation: exact only if
    # no whitespace character normalises, composes or lower-cases differently in context.
    import sys

    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    assert len(spaces) > 20
    around = ["ΑΣ", "Σ", "x\u0301", "\u0301", "\u00a8", "\u1100", "\u1161", "ﬁ", "Ａ", "สวั", "東", "I\u0307",
              "ǅ", "", "run"]
    for space in spaces:
        for left in around:
            for right in around:
                text = f"{left}{space}{right}{space}{space}{left}{right}"
                assert tokenize(text) == _whole_text_tokens(text), (space, left, right)


def test_raw_chunks_give_the_whole_texts_tokens_on_random_text() -> None:
    import random

    rng = random.Random(11)
    alphabet = ("aZ9_'.-ΣσςΑß İı\u00a8\u0301\u0308\u00a0\u3000\u2000\u2028\t\n\x1c"
                "ﬁﬀ①Ａ東京へ한\u1100\u1161\u11a8สวัดีက\u1031ျ👍🏽éñ¨´˜ｶﾞ")
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert tokenize(text) == _whole_text_tokens(text), repr(text)


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
