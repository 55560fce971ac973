"""Where the vendored JSON-Schema-Test-Suite lives and the dialect URI of each of its drafts."""

from __future__ import annotations

from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "data" / "json_schema_test_suite"
DIALECTS = {
    "draft4": "http://json-schema.org/draft-04/schema#",
    "draft6": "http://json-schema.org/draft-06/schema#",
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}
