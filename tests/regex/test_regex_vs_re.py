"""leapgram's regex engine against Python's ``re``: random regexes of the supported subset, a table of
tricky cases, and UTF-8 validity of what the byte-level DFA accepts.

Python is run with ``re.ASCII``: leapgram's ``\\d \\w \\s`` and case folding are ASCII-only by design.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from leapgram.errors import UnsupportedError
from leapgram.regex import DEAD, ExprPool, LazyDfa, fullmatch, parse_regex
from leapgram.regex.utf8 import normalize, ranges_to_expr
from tests.helpers.regex_ast import pattern_and_strings

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=2_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def matcher(pattern: str, ignore_case: bool = False, dotall: bool = False):
    """``data -> bool`` over one pool and DFA, so many strings cost one compilation."""
    pool = ExprPool()
    dfa = LazyDfa(pool, parse_regex(pattern, pool, ignore_case=ignore_case, dotall=dotall))
    return lambda data: dfa.is_accepting(dfa.run(dfa.initial, data))


def python_fullmatch(pattern: str, text: str, ignore_case: bool = False) -> bool:
    flags = re.ASCII | (re.IGNORECASE if ignore_case else 0)
    return re.fullmatch(pattern, text, flags) is not None


def check_against_re(pattern: str, positives: list[str], others: list[str], ignore_case: bool = False,
                     exact: bool = True) -> None:
    """``positives`` must match unless ``exact`` is False (case folding turns a sample of ``[^a]``
    into a non-match ``A``; an anchor inside may not hold), ``others`` as ``re`` says. leapgram
    reads patterns as ``re.ASCII`` does; ``re`` itself still folds case for characters beyond
    the BMP under ``(?i)`` (``[\ufffe-\U0001e900]`` matches U+1E922), and any cased character
    against a class that reaches beyond the BMP (``[ბ-\U00010000]`` matches U+10D0, whose
    uppercase U+1C90 is inside), quirks not copied."""
    ours = matcher(pattern, ignore_case)
    if ignore_case or not exact:
        others, positives = positives + others, []
    if ignore_case or "(?i" in pattern:  # re folds some non-ASCII characters even under re.ASCII
        wide = any(ord(c) > 0xFFFF for c in pattern)
        others = [t for t in others
                  if not any(c.lower() != c.upper() and (ord(c) > 0xFFFF or (wide and ord(c) > 0x7F)) for c in t)]
    for text in positives:
        assert python_fullmatch(pattern, text), ("sampler bug", pattern, text)
        assert ours(text.encode()), (pattern, text)
    for text in others:
        assert ours(text.encode()) == python_fullmatch(pattern, text, ignore_case), (pattern, text)


# ----- random regexes -----------------------------------------------------------------------


@FAST
@given(pattern_and_strings())
def test_random_regexes_agree_with_re(case):
    pattern, positives, others = case
    check_against_re(pattern.text, positives, others, exact=pattern.is_sampled_exactly())


@FAST
@given(pattern_and_strings(anchors=True))
def test_anchors_inside_agree_with_re_or_are_unsupported(case):
    check_anchors_inside(*case)


def check_anchors_inside(pattern, positives: list[str], others: list[str]) -> None:
    """An anchor inside a pattern is either read exactly like ``re`` or refused, never dropped."""
    try:
        check_against_re(pattern.text, positives, others, exact=False)
    except UnsupportedError as err:
        assert "anchor" in err.feature, pattern.text


@FAST
@given(pattern_and_strings(flags=False))
def test_ignore_case_argument_agrees_with_re_ignorecase(case):
    pattern, positives, others = case
    check_against_re(pattern.text, positives, others, ignore_case=True)


@pytest.mark.slow
@SLOW
@given(pattern_and_strings())
def test_random_regexes_agree_with_re_many(case):
    pattern, positives, others = case
    check_against_re(pattern.text, positives, others, exact=pattern.is_sampled_exactly())


@pytest.mark.slow
@SLOW
@given(pattern_and_strings(anchors=True))
def test_anchors_inside_agree_with_re_or_are_unsupported_many(case):
    check_anchors_inside(*case)


@FAST
@given(pattern_and_strings())
def test_fullmatch_wrapper_agrees_with_dfa(case):
    pattern, positives, others = case
    for text in positives + others[:3]:
        assert fullmatch(pattern.text, text.encode()) == python_fullmatch(pattern.text, text)


@FAST
@given(pattern_and_strings())
def test_sampled_strings_match(case):
    """Positives come from the regex's own AST, so these must all match (leapgram and ``re``)."""
    pattern, positives, _ = case
    assume(positives and pattern.is_sampled_exactly())
    ours = matcher(pattern.text)
    for text in positives:
        assert ours(text.encode()), (pattern.text, text)


# ----- tricky cases -------------------------------------------------------------------------

TRICKY = [
    ("a|", ["", "a", "b", "aa"]),
    ("|a", ["", "a", "b"]),
    ("()", ["", "a"]),
    ("(a*)*", ["", "a", "aaa", "b"]),
    ("(a*)+b", ["b", "aab", "a", ""]),
    ("(a|)+", ["", "a", "aa", "b"]),
    ("(|a)*", ["", "a", "aa"]),
    ("(a?){3}", ["", "a", "aaa", "aaaa"]),
    ("((a)|b)+", ["ab", "ba", "c"]),
    ("(a|ab)(c|bcd)", ["ac", "abc", "abcd", "abbcd", "acd", "ab"]),
    ("(a|b)*?abb", ["abb", "aabb", "babb", "ab"]),
    ("x*?y+?z??", ["y", "xxyz", "z", "xyzz"]),
    ("a{,3}", ["", "aaa", "aaaa"]),
    ("a{,}", ["", "aaaa", "a{,}"]),
    ("a{0}", ["", "a"]),
    ("a{2}{", ["aa{", "aa"]),
    ("a{", ["a{", "a"]),
    ("a{1", ["a{1", "a"]),
    ("a{x}", ["a{x}", "a"]),
    ("a{ 1}", ["a{ 1}", "a"]),
    ("a{1,2", ["a{1,2", "a"]),
    ("{", ["{"]),
    ("}", ["}"]),
    ("x{}", ["x{}", "x"]),
    ("a{١}", ["a{١}", "a"]),  # only ASCII digits make a quantifier
    ("a{²}", ["a{²}", "a"]),
    ("[]a]", ["]", "a", "b", "]a"]),
    ("[^]a]", ["]", "a", "b", "é"]),
    ("[a-]", ["a", "-", "b"]),
    ("[-a]", ["a", "-", "b"]),
    ("[\\w-]", ["a", "-", "."]),
    ("[a-c-e]", ["b", "-", "d", "e"]),
    ("[\\]]", ["]", "\\"]),
    ("[\\^a]", ["^", "a"]),
    ("[^^]", ["^", "a"]),
    ("[a\\-z]", ["a", "-", "b", "z"]),
    ("[\\b]", ["\b", "b"]),
    ("\\0", ["\x00", "0"]),
    ("\\08", ["\x008", "\x00"]),  # \0 then a literal 8: 8 is not an octal digit
    ("\\u00e9", ["é", "e", "É"]),
    ("\\xe9", ["é", "\xe9", "e"]),
    ("\\U0001F600", ["😀", "a"]),
    ("\\é", ["é"]),  # an escaped non-ASCII letter is itself, as in Python
    ("[😀-🙏]+", ["😀", "🙂", "🙏", "🚀", "a", "😀🙏"]),
    ("[^😀]", ["😀", "a", "é", "🙂"]),
    ("😀|☃", ["😀", "☃", "😀☃"]),
    ("[é-ü]", ["é", "ü", "ö", "e", "ÿ"]),
    ("[\\u0080-\\U0010FFFF]*", ["", "é€😀\U0010ffff", "a"]),
    ("[^\\x00-\\x7f]", ["é", "a", "\x7f", "\x80"]),
    ("[\\uD7FF-\\uE000]", ["\ud7ff", "\ue000", "\ud7fe", "\ue001"]),
    ("[\\U00010000-\\U0010FFFF]", ["\U00010000", "\U0010ffff", "\uffff", "😀"]),
    ("[\\u07ff-\\u0800]", ["\u07ff", "\u0800", "\u07fe", "\u0801"]),
    ("[\\uffff-\\U00010000]", ["\uffff", "\U00010000", "\ufffe", "\U00010001"]),
    (".", ["\n", "a", "é", "😀", "", "\r"]),
    ("(?s).", ["\n", "a", "😀"]),
    ("(?s:.)\\n.", ["\n\na", "a\n\n"]),
    (".*", ["", "abc", "a\nb", "😀é"]),
    ("(?i)abc", ["ABC", "aBc", "abd"]),
    ("(?i:ab)c", ["ABc", "ABC", "abc"]),
    ("a(?i:b)c", ["aBc", "ABc", "abC"]),
    ("(?i)[a-c]+", ["ABC", "abc", "d"]),
    ("(?i)[^a]", ["A", "a", "b"]),
    ("(?i)[Z-a]", ["z", "A", "_", "b"]),
    ("(?i)é", ["é", "É"]),  # ASCII-only case folding (re.ASCII): é and É stay distinct
    ("(?i)\\x41", ["a", "A"]),
    ("(?is).", ["\n"]),
    ("\\d+\\.\\d*", ["1.", "12.5", ".5", "١.2"]),
    ("\\w\\W\\s\\S\\D", ["a b c!", "_\n\t1x", "a b 1"]),
    ("[\\d\\s]+", ["1 2\n", "a"]),
    ("[^\\w]", ["a", " ", "é", "_"]),
    ("\\S", ["\x1c", "\x85", "a", " "]),  # ASCII \s: U+001C and U+0085 are not spaces
    ("^abc$", ["abc", "abc\n"]),
    ("^$", ["", "\n"]),
    ("^", [""]),
    ("$", ["", "a"]),
    ("a$|b", ["a", "b"]),
    ("^a|b$", ["a", "b"]),
    ("(^a|b)c", ["ac", "bc"]),
    ("(a|b$)", ["a", "b"]),
    ("(a$)?", ["", "a"]),
    ("(?:^a)", ["a"]),
    ("^^a$$", ["a"]),
    ("(?:)", ["", "a"]),
    ("(?:a|b)*c", ["c", "abac", "ab"]),
    ("(?#comment)a", ["a", ""]),
    ("(?P<year>\\d{4})-(?P<m>\\d\\d)", ["2024-01", "24-01"]),
    ("\\t\\n\\r\\f\\v\\a", ["\t\n\r\f\v\a"]),
    ("\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\\\\\^\\$\\/", [".*+?()[]{}|\\^$/"]),
    ("\\-\\ \\#\\\"\\'\\,\\:\\<\\>\\=\\!\\@\\%\\&\\~\\`", ["- #\"',:<>=!@%&~`"]),
    ("\n", ["\n"]),
    ("(a|b|c|ab|bc|abc)+", ["abcabc", "cba", "abd"]),
    ("(x+x+)+y", ["xxxxy", "xxxx"]),
    ("[a-z]{2,4}\\d?", ["ab", "abcd1", "abcde", "a1"]),
    ("(?:[^\"\\\\]|\\\\.)*", ['ab\\"c', 'a"b', "\\"]),
]


@pytest.mark.parametrize("pattern, texts", TRICKY)
def test_tricky_cases_agree_with_re(pattern, texts):
    ours = matcher(pattern)
    for text in texts:
        assert ours(text.encode("utf-8", "surrogatepass")) == python_fullmatch(pattern, text), (pattern, text)


# Deliberate differences from Python's re.
DIFFERENCES = [
    # ECMA-262 escapes (JSON Schema patterns are ECMA regexes): Python rejects them.
    ("\\u{1F600}", "😀", True),
    ("\\u{e9}", "é", True),
    ("\\cJ", "\n", True),
    # ECMA-262 named groups (Python 3.11 only knows (?P<name>...)).
    ("(?<year>\\d{4})", "2024", True),
    # UTF-8 has no surrogates, so a range across the gap matches no lone surrogate (Python does).
    ("[\\uD7FF-\\uE000]", "\ud800", False),
]


@pytest.mark.parametrize("pattern, text, expected", DIFFERENCES)
def test_deliberate_differences_from_re(pattern, text, expected):
    assert matcher(pattern)(text.encode("utf-8", "surrogatepass")) is expected


def test_ignore_case_argument_folds_ascii_only():
    ours = matcher("[a-c]é", ignore_case=True)
    assert ours("Bé".encode()) and ours("bé".encode())
    assert not ours("BÉ".encode())


def test_dotall_argument():
    assert matcher(".", dotall=True)(b"\n")
    assert not matcher(".")(b"\n")


# ----- UTF-8 --------------------------------------------------------------------------------

INTERESTING_BYTES = [0x00, 0x0A, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                     0xE0, 0xE1, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xF8, 0xFF]
byte_strings = st.one_of(
    st.binary(max_size=12),
    st.lists(st.sampled_from(INTERESTING_BYTES), max_size=8).map(bytes),
    st.text(max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
DOT_STAR = matcher(".*")
DOTALL_STAR = matcher("(?s).*")
NON_ASCII_STAR = matcher("[^\\x00-\\x7f]*")


def decodes(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@FAST
@given(byte_strings)
@example(b"\xc0\x80")  # overlong
@example(b"\xe0\x80\xaf")  # overlong
@example(b"\xed\xa0\x80")  # surrogate
@example(b"\xf4\x90\x80\x80")  # above U+10FFFF
@example(b"\xc3")  # truncated
@example(b"\xe2\x98")  # truncated
@example(b"\x80")  # lone continuation
def test_dot_star_accepts_exactly_valid_utf8(data):
    text = decodes(data)
    assert DOTALL_STAR(data) == (text is not None)
    assert DOT_STAR(data) == (text is not None and "\n" not in text)
    assert NON_ASCII_STAR(data) == (text is not None and all(ord(c) > 0x7F for c in text))


@pytest.mark.parametrize("data", [b"\xc0", b"\xc1", b"\xf5", b"\xff", b"\x80", b"\xe0\x80", b"\xe0\x9f",
                                  b"\xed\xa0", b"\xed\xbf", b"\xf0\x80", b"\xf0\x8f", b"\xf4\x90", b"a\xbf"])
def test_invalid_utf8_dies_at_the_first_bad_byte(data):
    pool = ExprPool()
    dfa = LazyDfa(pool, parse_regex("(?s).*", pool))
    assert dfa.run(dfa.initial, data[:-1]) != DEAD
    assert dfa.run(dfa.initial, data) == DEAD


@FAST
@given(st.characters(exclude_categories=["Cs"]))
@example("\x7f")
@example("\x80")
@example("\u07ff")
@example("\u0800")
@example("\ud7ff")
@example("\ue000")
@example("\uffff")
@example("\U00010000")
@example("\U0010ffff")
def test_partial_utf8_prefixes_are_live(ch):
    pool = ExprPool()
    dfa = LazyDfa(pool, parse_regex("(?s).", pool))
    encoded = ch.encode()
    state = dfa.initial
    for byte in encoded[:-1]:
        state = dfa.step(state, byte)
        assert state != DEAD and not dfa.is_accepting(state)
    assert dfa.is_accepting(dfa.step(state, encoded[-1]))


code_points = st.one_of(
    st.integers(0, 0x10FFFF),
    st.sampled_from([0, 0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xE000, 0xFFFF, 0x10000,
                     0x3FFFF, 0x40000, 0xFFFFF, 0x100000, 0x10FFFF]),
).filter(lambda cp: not 0xD800 <= cp <= 0xDFFF)


@FAST
@given(st.lists(code_points, min_size=2, max_size=4), st.lists(code_points, max_size=12))
def test_ranges_to_expr_matches_exactly_the_range(ends, probes):
    low, high = min(ends), max(ends)
    pool = ExprPool()
    expr = ranges_to_expr(pool, normalize([(low, high)]))
    for cp in probes + ends + [low - 1, high + 1]:
        if 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
            assert pool.matches(expr, chr(cp).encode()) == (low <= cp <= high), (hex(low), hex(high), hex(cp))


@pytest.mark.slow
def test_dot_matches_every_code_point():
    pool = ExprPool()
    dfa = LazyDfa(pool, parse_regex("(?s).", pool))
    rng = random.Random(0)
    for cp in list(range(0x3000)) + [rng.randrange(0x3000, 0x110000) for _ in range(20_000)]:
        if not 0xD800 <= cp <= 0xDFFF:
            assert dfa.is_accepting(dfa.run(dfa.initial, chr(cp).encode())), hex(cp)


def test_re_folding_quirk_beyond_the_bmp_is_not_copied():
    """Found by the random test: ``re`` (even with ``re.ASCII``) matches U+10D0 against a class
    reaching past U+FFFF under ``(?i)``; leapgram folds ASCII only, and the oracle skips it."""
    assert python_fullmatch("(?i)|[aბ-\U00010000]", "ა")
    assert not matcher("(?i)|[aბ-\U00010000]")("ა".encode())
    check_against_re("(?i)|[aბ-\U00010000]", [], ["ა", "a", "A", "ბ"])
