"""Fuzz the API from its own OpenAPI document (schemathesis, in-process ASGI).

Every operation gets a bounded number of generated requests, on both backends, over a small
published catalog: no answer may be a 500 and every answer must match the documented schema.
(The operations are driven by hand with hypothesis: schemathesis' pytest fixture loader fails
under pytest 9.)
"""

from __future__ import annotations

from typing import Any

import schemathesis
import schemathesis.checks as checks
from hypothesis import HealthCheck, given, settings

from .corpus import cmip5_records

EXAMPLES = 30


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_ctx: Any, value: Any) -> bytes:
    return str(value).encode("utf-8", "surrogatepass")


# slow by design (--durations): EXAMPLES cases for each operation of the API, in-process
def test_no_server_errors_and_responses_match_the_schema(app: Any, publish: Any, token: str):
    publish(list(cmip5_records()[:5]))
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    # the catalog's 13, esg-search's 3, the federation's 3, the transfer jobs' 7
    assert len(operations) == 26
    for operation in operations:
        if operation.definition.raw.get("operationId") in STREAMS:
            continue
        _fuzz(operation, token)


#: answers that last as long as what they follow: a job's event stream ends with the job, and
#: no agent runs here (its 404, its events and its end: tests/catalog/test_transfers.py)
STREAMS = {"transfer_events"}


def _fuzz(operation: Any, token: str) -> None:
    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def run(case: Any) -> None:
        # the schema cannot say which facets exist or which names are well formed, so a
        # schema-valid request may get a documented 400/404/422: only 5xx and schema breaks fail
        case.call_and_validate(
            headers={"Authorization": f"Bearer {token}"},
            excluded_checks=[checks.positive_data_acceptance],
        )

    run()
