"""JSON Schema ``format``: each supported format as a regex over the decoded value.

The regexes follow the RFCs the specification names, restricted to what a regular language can
say (docs/design/json-schema-values.md, "Formats"). ``regex`` is refused; a format not listed is
an annotation (any string, with a warning in ``ctx.warnings``).
"""

from __future__ import annotations

from ...errors import GrammarError
from ...regex.syntax import parse_regex
from .context import SchemaContext

LEAP_YEAR = r"([0-9]{2}([02468][48]|[13579][26]|[2468]0)|([02468][048]|[13579][26])00)"
DATE = (r"([0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
        rf"|02-(0[1-9]|1[0-9]|2[0-8]))|{LEAP_YEAR}-02-29)")
TIME = r"([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([zZ]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
DURATION = (r"P([0-9]+W|([0-9]+D|[0-9]+M([0-9]+D)?|[0-9]+Y([0-9]+M([0-9]+D)?)?)(T(TIME))?|T(TIME))"
            .replace("TIME", r"[0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S"))
OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPV4 = rf"{OCTET}(\.{OCTET}){{3}}"
LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
HOSTNAME = rf"{LABEL}(\.{LABEL})*\.?"
IDN_CHAR = r"[A-Za-z0-9\u00a1-\U0010ffff]"
IDN_LABEL = rf"{IDN_CHAR}([A-Za-z0-9\u00a1-\U0010ffff-]{{0,61}}{IDN_CHAR})?"
IDN_HOSTNAME = rf"{IDN_LABEL}([.\u3002\uff0e\uff61]{IDN_LABEL})*"
ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
EMAIL = rf"{ATOM}(\.{ATOM})*@({HOSTNAME}|\[{IPV4}\])"
IDN_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\U0010ffff-]+"
IDN_EMAIL = rf"{IDN_ATOM}(\.{IDN_ATOM})*@({IDN_HOSTNAME}|\[{IPV4}\])"
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
PCT = r"%[0-9A-Fa-f]{2}"
UCSCHAR = (r"\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef"
           + "".join(rf"\U{plane:04x}0000-\U{plane:04x}fffd" for plane in range(1, 15)).replace("000e0000", "000e1000"))
IPRIVATE = r"\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"


def _uri_forms(extra: str = "", query_extra: str = "") -> tuple[str, str]:
    """RFC 3986's ``URI`` and ``URI-reference`` (RFC 3987's ``IRI`` and ``IRI-reference`` when
    ``extra`` adds ``ucschar`` to the unreserved characters and ``query_extra`` ``iprivate``)."""
    unreserved = rf"A-Za-z0-9\-._~{extra}"
    sub = "!$&'()*+,;="
    pchar = rf"([{unreserved}{sub}:@]|{PCT})"
    segment, segment_nz = f"{pchar}*", f"{pchar}+"
    segment_nz_nc = rf"([{unreserved}{sub}@]|{PCT})+"
    query = rf"({pchar}|[/?{query_extra}])*"
    fragment = rf"({pchar}|[/?])*"
    ip_literal = rf"\[(({IPV6})|[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~{sub}:]+)\]"
    authority = rf"(([{unreserved}{sub}:]|{PCT})*@)?({ip_literal}|([{unreserved}{sub}]|{PCT})*)(:[0-9]*)?"
    abempty = f"(/{segment})*"
    absolute = f"/({segment_nz}(/{segment})*)?"
    tail = rf"(\?{query})?(#{fragment})?"
    hier = f"(//{authority}{abempty}|{absolute}|{segment_nz}(/{segment})*)?"
    relative = f"(//{authority}{abempty}|{absolute}|{segment_nz_nc}(/{segment})*)?"
    uri = f"{SCHEME}{hier}{tail}"
    return uri, f"{uri}|{relative}{tail}"


SCHEME = r"[A-Za-z][A-Za-z0-9+\-.]*:"
VARNAME = rf"([A-Za-z0-9_]|{PCT})(\.?([A-Za-z0-9_]|{PCT}))*"
VARSPEC = rf"{VARNAME}(:[1-9][0-9]{{0,3}}|\*)?"
URI_TEMPLATE = (rf"([^\x00-\x20\"'%<>\\^`{{|}}\x7f]|{PCT}"
                rf"|\{{[+#./;?&=,!@|]?{VARSPEC}(,{VARSPEC})*\}})*")
JSON_POINTER = r"(/([^~/]|~[01])*)*"
RELATIVE_JSON_POINTER = rf"(0|[1-9][0-9]*)(#|{JSON_POINTER})"


def _ipv6() -> str:
    h16 = "[0-9A-Fa-f]{1,4}"
    ls32 = rf"({h16}:{h16}|{IPV4})"
    forms = [rf"({h16}:){{6}}{ls32}", rf"::({h16}:){{5}}{ls32}"]
    for before in range(7):
        after = 4 - before
        head = f"({h16}(:{h16}){{0,{before}}})?::" if before else f"({h16})?::"
        if after >= 1:
            forms.append(rf"{head}({h16}:){{{after}}}{ls32}" if after > 1 else rf"{head}{h16}:{ls32}")
        elif after == 0:
            forms.append(rf"{head}{ls32}")
        elif after == -1:
            forms.append(rf"{head}{h16}")
        else:
            forms.append(head)
    return "|".join(forms)


IPV6 = _ipv6()
URI, URI_REFERENCE = _uri_forms()
IRI, IRI_REFERENCE = _uri_forms(UCSCHAR, IPRIVATE)

FORMATS = {
    "date-time": rf"{DATE}[Tt]{TIME}", "date": DATE, "time": TIME, "duration": DURATION,
    "email": EMAIL, "idn-email": IDN_EMAIL, "hostname": HOSTNAME, "idn-hostname": IDN_HOSTNAME,
    "ipv4": IPV4, "ipv6": IPV6, "uuid": UUID, "uri": URI, "uri-reference": URI_REFERENCE,
    "iri": IRI, "iri-reference": IRI_REFERENCE, "uri-template": URI_TEMPLATE,
    "json-pointer": JSON_POINTER, "relative-json-pointer": RELATIVE_JSON_POINTER,
}
ANY_STRING_FORMATS = {"regex": "whether a string is a valid regex is not a regular property"}


def format_expr(ctx: SchemaContext, name: object, pointer: str) -> int | None:
    """The expression (over the decoded value's UTF-8) of the strings in format ``name``; None
    (any string, with a warning) for a format that is only an annotation here."""
    if not isinstance(name, str):
        raise GrammarError(f"format must be a string, got {name!r}", pointer=pointer)
    if name in FORMATS:
        return parse_regex(FORMATS[name], ctx.pool)
    if name in ANY_STRING_FORMATS:  # a format validators check, that no regular language captures
        ctx.unsupported("format", pointer, f"format {name!r}: {ANY_STRING_FORMATS[name]}; "
                        "lenient=True accepts any string")
        return None
    ctx.warnings.append(f"{pointer}: format {name!r} not enforced (unknown format, an annotation)")
    return None
