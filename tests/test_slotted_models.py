"""`class M(Model, slots=True)`: a slot per column, no instance `__dict__`, everything else a
model is (defaults, ClassVars, inheritance, the metadata, pickling), and the row builder fills
it (tests/engine/test_slotted_models.py runs it on the databases)."""

from __future__ import annotations

import abc
import copy
import dataclasses
import pickle
import sys
from typing import ClassVar, Literal

import pytest

from tempest_typed import UNSET, Model, ValidationError, column
from tempest_typed.engine.result import row_builder
from tempest_typed.model import meta_of


class Ticket(Model, table="slot_tickets", slots=True):
    id: int = column(primary_key=True)
    title: str
    state: Literal["open", "shut"] = "open"
    tags: list[str] = dataclasses.field(default_factory=list)
    note: str | None = None
    seen: ClassVar[int] = 0


class Urgent(Ticket, table="slot_urgent", slots=True):
    level: int = 1
    state: Literal["open", "shut"] = "shut"  # a default given again for a base's column


def test_each_column_is_a_slot_and_instances_have_no_dict() -> None:
    assert Ticket.__slots__ == ("id", "title", "state", "tags", "note")
    t = Ticket(title="a")
    assert not hasattr(t, "__dict__")
    assert (t.id, t.title, t.state, t.tags, t.note) == (UNSET, "a", "open", [], None)
    t.note = "n"
    assert t.note == "n"
    with pytest.raises(AttributeError):
        t.other = 1  # type: ignore[attr-defined]  # the point: no attribute beyond the columns
    assert sys.getsizeof(t) < sys.getsizeof(Plain(title="a")) + sys.getsizeof(
        Plain(title="a").__dict__)


class Plain(Model, table="slot_plain"):
    id: int = column(primary_key=True)
    title: str


def test_class_vars_stay_class_attributes_and_the_metadata_is_a_models() -> None:
    assert Ticket.seen == 0 and "seen" not in Ticket.__slots__
    assert [c.attr for c in meta_of(Ticket).columns] == ["id", "title", "state", "tags", "note"]
    assert [(c.attr, c.required) for c in meta_of(Ticket).columns][:2] == [
        ("id", False), ("title", True)]


def test_a_subclass_slots_only_its_new_columns_and_keeps_the_bases_slots_working() -> None:
    assert Urgent.__slots__ == ("level",)
    u = Urgent(title="b")
    assert not hasattr(u, "__dict__")
    assert (u.state, u.level) == ("shut", 1)
    u.state = "open"
    assert u.state == "open"
    assert [c.attr for c in meta_of(Urgent).columns] == [
        "id", "title", "state", "tags", "note", "level"]


def test_dataclass_tools_copy_and_pickle_work_on_slotted_instances() -> None:
    t = Ticket(id=3, title="a", tags=["x"])
    assert dataclasses.asdict(t) == {"id": 3, "title": "a", "state": "open", "tags": ["x"],
                                     "note": None}
    assert dataclasses.replace(t, title="b").title == "b"
    assert copy.deepcopy(t) == t and pickle.loads(pickle.dumps(t)) == t
    assert Ticket(title="a") == Ticket(title="a") != Ticket(title="b")


def test_annotations_of_a_function_local_model_resolve_in_its_scope() -> None:
    Size = Literal["s", "m"]

    class Shirt(Model, table="slot_shirts", slots=True):
        id: int = column(primary_key=True)
        size: Size = "s"  # a name only this function's scope knows

    assert meta_of(Shirt).by_attr["size"].literal_values == ("s", "m")


def test_own_slots_with_slots_true_are_refused() -> None:
    with pytest.raises(ValidationError, match="drop its own __slots__"):
        class Both(Model, table="slot_both", slots=True):
            __slots__ = ("id",)
            id: int = column(primary_key=True)


def test_the_row_builder_fills_slotted_instances_even_past_a_setattr_hook() -> None:
    class Guarded(Model, table="slot_guarded", slots=True):
        id: int = column(primary_key=True)
        title: str

        def __setattr__(self, name: str, value: object) -> None:
            raise AssertionError("the builder stores cells as the constructor would")

    for model in (Ticket, Guarded):
        build = row_builder(meta_of(model), {})
        assert build is not None
        rows = build([(1, "x", "open", [], None)[:len(meta_of(model).columns)]])
        assert type(rows[0]) is model and rows[0].id == 1 and rows[0].title == "x"


def test_a_model_may_take_an_abstract_base_as_well() -> None:
    class Labelled(abc.ABC):
        @abc.abstractmethod
        def label(self) -> str: ...

    class Tag(Model, Labelled, table="slot_tags", slots=True):
        id: int = column(primary_key=True)
        name: str

        def label(self) -> str:
            return self.name

    class Unfinished(Model, Labelled, table="slot_unfinished"):
        id: int = column(primary_key=True)

    assert Tag(name="t").label() == "t" and isinstance(Tag(name="t"), Labelled)
    with pytest.raises(TypeError, match="abstract"):
        Unfinished()  # type: ignore[abstract]  # the point: ABC's rule holds for a model too


class Alias:
    """A name `ClassVar` that is not typing's: `Alias.ClassVar` annotates a column."""

    ClassVar = int


def test_an_annotation_slots_cannot_judge_is_refused_not_left_without_a_slot() -> None:
    with pytest.raises(ValidationError, match="slots=True could not tell that it is a column"):
        class Odd(Model, table="slot_odd", slots=True):
            id: int = column(primary_key=True)
            count: Alias.ClassVar = 0  # a string (the module defers annotations)


def test_two_slotted_bases_with_columns_are_refused_naming_the_way_out() -> None:
    class Named(Model, table="slot_named", slots=True):
        id: int = column(primary_key=True)
        name: str = ""

    with pytest.raises(ValidationError, match="two of its bases hold columns in slots"):
        class Both(Named, Ticket, table="slot_both_bases"):
            pass


def test_annotations_given_as_objects_are_judged_as_strings_are() -> None:
    # this module's annotations are strings (from __future__ import annotations); a module
    # without that import hands the metaclass the objects themselves
    namespace = {"__module__": __name__, "__qualname__": "Live",
                 "__annotations__": {"id": int, "name": str, "limit": ClassVar[int]},
                 "id": column(primary_key=True), "limit": 3}
    live = type(Model)("Live", (Model,), namespace, table="slot_live", slots=True)
    assert live.__slots__ == ("id", "name") and live.limit == 3
    assert not hasattr(live(name="x"), "__dict__")
    assert [c.attr for c in meta_of(live).columns] == ["id", "name"]
