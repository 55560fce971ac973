"""JSON Schema ``format``: the decoded strings each format accepts, as expressions.

Each known format is a regex over the decoded value (read with :func:`parse_regex`, so matched in
full) written from its RFC grammar: RFC 3339 dates and times (days per month and leap years exact,
no leap second), ISO 8601 durations as RFC 3339 appendix A spells them, RFC 3986 URIs, RFC 3987
IRIs, RFC 5321 dot-atom e-mail addresses, RFC 1123 host names (labels of 63, names of 253), IPv4
without leading zeros, RFC 4291 IPv6, RFC 4122 UUIDs, RFC 6901 JSON pointers, RFC 6570 URI
templates. ``regex`` and formats this module does not know are annotations: any string, and a
warning in ``ctx.warnings`` (the JSON Schema specification makes ``format`` an annotation unless
a validator opts in).
"""

from __future__ import annotations

from ...regex.syntax import parse_regex
from .context import SchemaContext

DIGIT2 = r"[0-9]{2}"
LEAP_YEAR = r"([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)"
MONTH_DAY = (r"((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
             r"|02-(0[1-9]|1[0-9]|2[0-8]))")
DATE = rf"([0-9]{{4}}-{MONTH_DAY}|{LEAP_YEAR}-02-29)"
OFFSET = r"([zZ]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
TIME = rf"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?{OFFSET}"
DATE_TIME = rf"{DATE}[tT]{TIME}"

DUR_TIME = r"T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S)"
DUR_DATE = rf"([0-9]+D|[0-9]+M([0-9]+D)?|[0-9]+Y([0-9]+M([0-9]+D)?)?)({DUR_TIME})?"
DURATION = rf"P({DUR_DATE}|{DUR_TIME}|[0-9]+W)"

OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPV4 = rf"{OCTET}(\.{OCTET}){{3}}"
H16 = r"[0-9a-fA-F]{1,4}"
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
HOSTNAME = rf"{LABEL}(\.{LABEL})*"
IDN_LABEL_CHAR = r"[A-Za-z0-9\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef\U00010000-\U0010ffff]"
IDN_HOSTNAME = rf"{IDN_LABEL_CHAR}(({IDN_LABEL_CHAR}|-){{0,61}}{IDN_LABEL_CHAR})?(\.{IDN_LABEL_CHAR}(({IDN_LABEL_CHAR}|-){{0,61}}{IDN_LABEL_CHAR})?)*"
ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
IDN_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\U0010ffff-]+"

JSON_POINTER = r"(/([^~/]|~[01])*)*"
RELATIVE_JSON_POINTER = rf"(0|[1-9][0-9]*)(#|{JSON_POINTER})"
VARNAME = r"([A-Za-z0-9_]|%[0-9A-Fa-f]{2})(\.?([A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*"
VARSPEC = rf"{VARNAME}(:[1-9][0-9]{{0,3}}|\*)?"
URI_TEMPLATE = (r"([^\x00-\x20\"'%<>\\^`{|}\x7f]|%[0-9A-Fa-f]{2}"
                rf"|\{{[+#./;?&=,!@|]?{VARSPEC}(,{VARSPEC})*\}})*")


def ipv6() -> str:
    """RFC 3986 ``IPv6address``: eight groups with at most one ``::``, the last two maybe IPv4."""
    ls32 = rf"({H16}:{H16}|{IPV4})"
    forms = [rf"({H16}:){{6}}{ls32}", rf"::({H16}:){{5}}{ls32}"]
    for before in range(7):
        after = 4 - before
        head = f"(({H16}:){{0,{before}}}{H16})?" if before else f"({H16})?"
        if after >= 0:
            tail = rf"({H16}:){{{after}}}{ls32}" if after else ls32
        elif after == -1:
            tail = H16
        else:
            tail = ""
        forms.append(f"{head}::{tail}")
    return "(" + "|".join(forms) + ")"


def uri(iri: bool, reference: bool) -> str:
    """RFC 3986 ``URI`` / ``URI-reference`` (RFC 3987 ``IRI`` forms when ``iri``)."""
    unreserved = r"A-Za-z0-9\-._~" + (r"\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef\U00010000-\U0010ffff" if iri else "")
    pct = "%[0-9A-Fa-f]{2}"
    sub = "!$&'()*+,;="
    pchar = f"([{unreserved}{sub}:@]|{pct})"
    query = f"([{unreserved}{sub}:@/?]|{pct}|[\\ue000-\\uf8ff])*" if iri else f"([{unreserved}{sub}:@/?]|{pct})*"
    fragment = f"([{unreserved}{sub}:@/?]|{pct})*"
    host = rf"(\[{ipv6()}\]|{IPV4}|([{unreserved}{sub}]|{pct})*)"
    authority = rf"(([{unreserved}{sub}:]|{pct})*@)?{host}(:[0-9]*)?"
    abempty = f"(/{pchar}*)*"
    rootless = f"{pchar}+{abempty}"
    hier = f"(//{authority}{abempty}|/({rootless})?|{rootless})?"
    tail = rf"(\?{query})?(#{fragment})?"
    absolute = f"[A-Za-z][A-Za-z0-9+.\\-]*:{hier}{tail}"
    if not reference:
        return absolute
    nocolon = f"([{unreserved}{sub}@]|{pct})"
    relative = f"(//{authority}{abempty}|/({rootless})?|{nocolon}+{abempty})?{tail}"
    return f"({absolute}|{relative})"


FORMATS = {
    "date-time": DATE_TIME,
    "date": DATE,
    "time": TIME,
    "duration": DURATION,
    "email": rf"{ATOM}(\.{ATOM})*@{HOSTNAME}",
    "idn-email": rf"{IDN_ATOM}(\.{IDN_ATOM})*@{IDN_HOSTNAME}",
    "hostname": HOSTNAME,
    "idn-hostname": IDN_HOSTNAME,
    "ipv4": IPV4,
    "ipv6": ipv6(),
    "uuid": UUID,
    "uri": uri(iri=False, reference=False),
    "uri-reference": uri(iri=False, reference=True),
    "iri": uri(iri=True, reference=False),
    "iri-reference": uri(iri=True, reference=True),
    "uri-template": URI_TEMPLATE,
    "json-pointer": JSON_POINTER,
    "relative-json-pointer": RELATIVE_JSON_POINTER,
}
MAX_HOSTNAME = {"hostname": 253, "idn-hostname": 253}


def format_expr(ctx: SchemaContext, name: str, pointer: str) -> int | None:
    """The decoded strings of format ``name``; None (and a warning) when it is not enforced."""
    pattern = FORMATS.get(name)
    if pattern is None:
        ctx.warnings.append(f"{pointer or '/'}: format {name!r} is not enforced (treated as an annotation)")
        return None
    pool = ctx.pool
    expr = parse_regex(pattern, pool)
    if name in MAX_HOSTNAME:
        expr = pool.intersect([expr, parse_regex(f"(?s:.{{1,{MAX_HOSTNAME[name]}}})", pool)])
    return expr
