"""A composite primary key, as in the docs' many-to-many link table, on every database.

`primary_key=True` on two int columns made each an identity: two identity columns on
PostgreSQL, and a CREATE TABLE that failed on SQLite (two INTEGER PRIMARY KEY) and MariaDB
(error 1075). Now it is one `PRIMARY KEY (post_id, tag_id)`, no column is generated, both are
required, and check_schema() compares the key. Run on both engines (the contract's adapter).
"""

from __future__ import annotations

from typing import Any

import pytest

from tempest_typed import (
    IntegrityError,
    Model,
    QueryExecutionError,
    SchemaError,
    ValidationError,
    column,
    delete,
    insert,
    join,
    select,
)

pytestmark = pytest.mark.asyncio


class Post(Model, table="eng_ck_posts"):
    id: int = column(primary_key=True)
    title: str


class Tag(Model, table="eng_ck_tags"):
    id: int = column(primary_key=True)
    name: str = column(max_length=50, unique=True)


class PostTag(Model, table="eng_ck_post_tags"):
    """The link table: each row ties one post to one tag, once."""

    post_id: int = column(primary_key=True, references="eng_ck_posts.id")
    tag_id: int = column(primary_key=True, references="eng_ck_tags.id")


class PostTagOneKey(Model, table="eng_ck_post_tags"):
    """The same table as a model with a one-column key."""

    post_id: int = column(primary_key=True)
    tag_id: int


MODELS = (PostTag, Tag, Post)


async def test_a_link_table_is_created_written_read_and_dropped(db: Any) -> None:
    await db.execute(insert(Post).values([{"id": 1, "title": "a"}, {"id": 2, "title": "b"}]))
    await db.execute(insert(Tag).values([{"id": 10, "name": "x"}, {"id": 20, "name": "y"}]))
    await db.execute(insert(PostTag).values([
        PostTag(post_id=1, tag_id=10), PostTag(post_id=1, tag_id=20),
        PostTag(post_id=2, tag_id=10)]))
    rows = (await db.execute(select(PostTag).order_by("post_id").order_by("tag_id"))).all()
    assert rows == [PostTag(post_id=1, tag_id=10), PostTag(post_id=1, tag_id=20),
                    PostTag(post_id=2, tag_id=10)]
    tagged = (await db.execute(
        join(Post, "post").inner_join(PostTag, "link", {"post.id": "link.post_id"})
        .inner_join(Tag, "tag", {"link.tag_id": "tag.id"})
        .where({"tag.name": "x"}).order_by("post.id"))).all()
    assert [row.post.title for row in tagged] == ["a", "b"]
    await db.check_schema(*MODELS)
    await db.create_all(*MODELS)  # again: everything compares equal
    deleted = await db.execute(delete(PostTag).where({"post_id": 1, "tag_id": 20}))
    assert deleted.rows_affected() == 1


async def test_a_pair_twice_is_an_integrity_error(db: Any) -> None:
    await db.execute(insert(Post).values({"id": 1, "title": "a"}))
    await db.execute(insert(Tag).values({"id": 10, "name": "x"}))
    await db.execute(insert(PostTag).values({"post_id": 1, "tag_id": 10}))
    with pytest.raises(IntegrityError):
        await db.execute(insert(PostTag).values({"post_id": 1, "tag_id": 10}))
    assert len((await db.execute(select(PostTag))).all()) == 1


async def test_no_column_of_the_key_is_filled_by_the_database(db: Any) -> None:
    with pytest.raises(ValidationError, match=r"missing required column\(s\) 'tag_id'"):
        await db.execute(insert(PostTag).values({"post_id": 1}))
    # written by hand, without the builder: the database has no value for it either (MySQL
    # says so with error 1364, the others with a NOT NULL violation)
    dialect = db.dialect
    q = dialect.quote_identifier
    with pytest.raises(QueryExecutionError):
        await db.execute_sql(f"INSERT INTO {q('eng_ck_post_tags')} ({q('post_id')}) "
                             "VALUES (1)")


async def test_check_schema_compares_the_primary_key(db: Any) -> None:
    with pytest.raises(SchemaError) as info:
        await db.check_schema(PostTagOneKey)
    (difference,) = info.value.differences
    assert (difference.problem, difference.expected, difference.actual) == (
        "changed primary key", "PRIMARY KEY (post_id)", "PRIMARY KEY (post_id, tag_id)")
    await db.drop_all(*MODELS)
    await db.create_all(Post, Tag, PostTagOneKey)
    with pytest.raises(SchemaError) as info:
        await db.create_all(PostTag)
    (difference,) = info.value.differences
    assert (difference.expected, difference.actual) == (
        "PRIMARY KEY (post_id, tag_id)", "PRIMARY KEY (post_id)")
