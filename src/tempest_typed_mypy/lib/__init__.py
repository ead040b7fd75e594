"""The plugin's foundation: what the checks share. It imports no check.

Each module builds only on those listed before it:

- `names`: the full names of tempest_typed's classes and functions, the where operators;
- `syntax`: what an expression says as written (a literal string, the function called);
- `definitions`: the one expression a variable of the module was assigned;
- `metadata`: the facts of each model, collected once per class;
- `tables`: a model's table name, and the models a module sees;
- `messages`: the error codes and the wording of every message;
- `typos`: when a name that matches nothing is surely a typo;
- `row_types`: `Row[TypedDict(...)]`, made for a statement and read back from its type;
- `scopes`: the column a name means at one place of a statement;
- `families`: which columns can be compared;
- `correlation`, `references`, `values`, `computed`, `conditions`: the expression language
  that every statement's hooks check (a condition holds values, a value may be a column
  reference, a subquery or a computed expression, a subquery's references may name the
  enclosing statement, a CASE holds conditions: `computed` is given the condition checker
  by its callers, so that it stays below `conditions`).
"""
