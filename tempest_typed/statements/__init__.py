"""Immutable statement builders and the tree they produce."""

from .base import Statement
from .delete import Delete, delete
from .insert import Insert, insert
from .select import Select, select
from .update import Update, update
from .where import Condition, Subquery, and_, not_, or_

__all__ = ["Condition", "Delete", "Insert", "Select", "Statement", "Subquery", "Update", "and_",
           "delete", "insert", "not_", "or_", "select", "update"]
