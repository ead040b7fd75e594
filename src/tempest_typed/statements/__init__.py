"""Immutable statement builders and the tree they produce."""

from .aggregate import AggregateFunction, Grouped
from .base import Statement
from .compound import SetQuery
from .cte import NamedSelect
from .delete import Delete, delete
from .insert import Insert, insert
from .join import Join, join
from .query import Query
from .select import Select, select
from .update import Update, update
from .where import Condition, ExistsCondition, Subquery, and_, not_, or_

__all__ = ["AggregateFunction", "Condition", "Delete", "ExistsCondition", "Grouped", "Insert",
           "Join", "NamedSelect", "Query", "Select", "SetQuery", "Statement", "Subquery",
           "Update", "and_", "delete",
           "insert", "join", "not_", "or_", "select", "update"]
