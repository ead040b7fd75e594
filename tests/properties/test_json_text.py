"""The JSON reader of every driver (engine/types.py json_from_text) gives what json.loads gives,
value or error, for any document and for any text at all (no database needed)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempest_typed.engine.types import json_from_text, json_from_utf8

documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def outcome(read: Callable[[str], object], text: str) -> tuple[str, object]:
    """What reading `text` gives: ("value", the value) or ("error", the message)."""
    try:
        return "value", read(text)
    except json.JSONDecodeError as exc:
        return "error", str(exc)


@given(documents, st.booleans(), st.sampled_from([None, 2]),
       st.sampled_from([(", ", ": "), (",", ":")]))
def test_a_document_reads_as_json_loads_reads_it(value: object, ascii_only: bool,
                                                  indent: int | None,
                                                  separators: tuple[str, str]) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent, separators=separators)
    assert json_from_text(text) == json.loads(text) == value
    assert json_from_utf8(text.encode()) == value


@given(st.text(alphabet=st.sampled_from('{}[]",:0123456789.eE+-tfnrulaseNIy \t\n\\x'))
       | st.text())
def test_any_text_gives_the_value_or_the_error_json_loads_gives(text: str) -> None:
    assert outcome(json_from_text, text) == outcome(json.loads, text)


@pytest.mark.parametrize("text", [" {}", "{} ", "\n[1]\n", "{}{}", "", "NaN", "[1,]", "1 2"])
def test_whitespace_around_a_document_and_garbage_behave_as_json_loads(text: str) -> None:
    assert repr(outcome(json_from_text, text)) == repr(outcome(json.loads, text))
