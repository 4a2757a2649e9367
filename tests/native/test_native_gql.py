"""Every GraphQL document ndnsci sends to NDN-DPDK is valid against the running service's schema.

The schema is the full introspection of ``ndndpdk-svc`` at the pinned NDN-DPDK commit
(``tests/native/data/ndndpdk-graphql-introspection.json``); graphql-core validates each document
the way NDN-DPDK's graphql-go does (fields, arguments, types, variables).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from graphql import build_client_schema, parse, validate

from ndnsci.native import gql

SCHEMA_FILE = Path(__file__).parent / "data" / "ndndpdk-graphql-introspection.json"


@pytest.fixture(scope="module")
def schema():  # type: ignore[no-untyped-def]
    raw = json.loads(SCHEMA_FILE.read_text())
    return build_client_schema(raw.get("data", raw))


@pytest.mark.parametrize("name", sorted(gql.DOCUMENTS))
def test_document_is_valid_against_the_schema(schema, name: str) -> None:  # type: ignore[no-untyped-def]
    document = parse(gql.DOCUMENTS[name])
    errors = validate(schema, document)
    assert errors == [], [e.message for e in errors]
    (operation,) = document.definitions
    assert operation.name is not None and operation.name.value == name


def test_every_document_constant_is_registered() -> None:
    constants = {
        value
        for key, value in vars(gql).items()
        if key.isupper()
        and isinstance(value, str)
        and value.lstrip().startswith(("query", "mutation"))
    }
    assert constants == set(gql.DOCUMENTS.values())


def test_the_validator_rejects_a_wrong_document(schema) -> None:  # type: ignore[no-untyped-def]
    # the check above is only worth something if a mistake is caught: a field NDN-DPDK lacks,
    wrong = parse("query Faces { faces { id nonexistentField } }")
    assert [e.message for e in validate(schema, wrong)] == [
        "Cannot query field 'nonexistentField' on type 'Face'."
    ]
    # and a task field the fetcher does not know
    wrong = parse('mutation Fetch { fetch(fetcher: "x", task: {prefix: "/a", bogus: 2}) { id } }')
    assert any("bogus" in e.message for e in validate(schema, wrong))
