#!/usr/bin/env bash
# The main job: the durable-queue demo (SQLite file by default; --url for PostgreSQL/MySQL).
EXTRAS="postgres,mysql"
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
exec .venv/bin/python -m tempest_typed.queue demo "$@"
