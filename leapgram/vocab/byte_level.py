"""Byte-level BPE's printable stand-ins for bytes, and strict UTF-8 decoding of token text."""

from __future__ import annotations

from ..errors import TokenizerError


def gpt2_unicode_to_bytes() -> dict[str, int]:
    """GPT-2's table from the printable character standing for a byte back to the byte."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    others = [b for b in range(256) if b not in printable]
    table = {chr(b): b for b in printable}
    table.update({chr(256 + n): b for n, b in enumerate(others)})
    return table


def _translation_table() -> dict[int, int]:
    table = {ord(char): byte for char, byte in gpt2_unicode_to_bytes().items()}
    for code in range(256):
        table.setdefault(code, 0x100)
    return table


_BYTE_LEVEL = _translation_table()


def byte_level_bytes(text: str) -> bytes:
    """The bytes of a byte-level BPE token string (its UTF-8 if it is not in GPT-2's table)."""
    try:
        return text.translate(_BYTE_LEVEL).encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def utf8_text(data: bytes) -> str:
    """``data`` decoded as strict UTF-8; :class:`leapgram.TokenizerError` naming the bad byte otherwise."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TokenizerError(
            f"encode takes UTF-8 text; byte 0x{data[err.start]:02x} at offset {err.start} is not valid UTF-8"
        ) from None
