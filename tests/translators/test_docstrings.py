"""The examples in the translators' docstrings run and print what they say."""

import doctest

import pytest

import ndnsci
import ndnsci_translators as translators
from ndnsci.sdk import describe as _describe
from ndnsci_translators import _time, names, netcdf, registry


@pytest.mark.parametrize("module", [ndnsci, translators, registry, names, netcdf, _time, _describe])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
