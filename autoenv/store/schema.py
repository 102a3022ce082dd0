"""Tables of the flywheel store and their versioned migrations.

SQLAlchemy Core keeps one schema for SQLite (the default: one file, WAL for
concurrent writers) and PostgreSQL (when several machines share a store).
Migrations are an ordered list; the applied version lives in ``schema_version``
so an old store file is upgraded in place, never rebuilt.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
)

metadata = MetaData()

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("applied_at", DateTime, server_default=func.now()),
)

runs = Table(
    "runs",
    metadata,
    Column("name", String(128), primary_key=True),
    Column("config", JSON, nullable=False),
    Column("created_at", DateTime, server_default=func.now()),
)

#: One row per distinct task content (hash), whatever produced it.
tasks = Table(
    "tasks",
    metadata,
    Column("hash", String(64), primary_key=True),
    Column("name", String(256), nullable=False),
    Column("path", Text, nullable=False),
    Column("origin", String(256)),  # seed case id, "bundled", "static:<dir>"
    Column("method", String(32)),  # prompt | feedback | agentic | bundled | static
    Column("proposer", String(256)),
    Column("policy_version", Integer),
    Column("valid", Boolean),
    Column("failed_check", String(64)),
    Column("calibrated", Boolean),
    Column("pass_rate", Float),
    Column("proposer_reward", Float),
    Column("n_files", Integer),
    Column("validation", JSON),
    Column("calibration", JSON),
    Column("parent_name", String(256)),  # the task this one is a harder variant of (propose --method evolve; v3)
    Column("parent_hash", String(64)),
    Column("created_at", DateTime, server_default=func.now()),
)

#: Every proposer attempt, accepted or not, with the reason it was rejected.
attempts = Table(
    "attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run", String(128), nullable=False),
    Column("step", Integer, nullable=False),
    Column("seed_case", String(256)),
    Column("method", String(32), nullable=False),
    Column("proposer", String(256)),
    Column("policy_version", Integer),
    Column("task_hash", String(64)),
    Column("valid", Boolean, nullable=False),
    Column("calibrated", Boolean, nullable=False),
    Column("reason", Text),
    Column("reward", Float, nullable=False),
    Column("n_files", Integer),
    Column("n_actions", Integer),
    Column("actions", JSON),
    Column("duration_sec", Float),
    Column("episode_path", Text),  # the proposer's episode as it saw it (v2)
    Column("parent_name", String(256)),  # --method evolve: the task the attempt wrote a variant of (v3)
    Column("parent_hash", String(64)),
    Column("attempt_key", String(256), nullable=False),
    Column("created_at", DateTime, server_default=func.now()),
    UniqueConstraint("run", "attempt_key", name="uq_attempt_key"),
)

#: A group is G rollouts of one task by one policy version (GRPO's unit).
groups = Table(
    "groups",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run", String(128), nullable=False),
    Column("step", Integer, nullable=False),
    Column("task_hash", String(64), ForeignKey("tasks.hash"), nullable=False),
    Column("role", String(16), nullable=False),  # solver | proposer
    Column("size", Integer, nullable=False),
    Column("mean_reward", Float),
    Column("std_reward", Float),
    Column("useful", Boolean),
    Column("collection_sec", Float),
    UniqueConstraint("run", "step", "task_hash", "role", name="uq_group"),
)

rollouts = Table(
    "rollouts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run", String(128), nullable=False),
    Column("step", Integer, nullable=False),
    Column("group_id", Integer, ForeignKey("groups.id"), nullable=False),
    Column("task_hash", String(64), ForeignKey("tasks.hash"), nullable=False),
    Column("index", Integer, nullable=False),
    Column("policy_version", Integer, nullable=False),
    Column("reward", Float),
    Column("advantage", Float),
    Column("n_turns", Integer),
    Column("error", String(64)),
    Column("trajectory_path", Text),
    Column("duration_sec", Float),
    Column("created_at", DateTime, server_default=func.now()),
    # the idempotency key: a resumed step never duplicates a rollout
    UniqueConstraint("group_id", "index", name="uq_rollout"),
)

train_steps = Table(
    "train_steps",
    metadata,
    Column("run", String(128), primary_key=True),
    Column("step", Integer, primary_key=True),
    Column("status", String(16), nullable=False),  # collecting | trained | done
    Column("policy_version_in", Integer, nullable=False),
    Column("policy_version_out", Integer),
    Column("backend", String(32)),
    Column("loss", Float),
    Column("n_samples", Integer),
    Column("n_groups", Integer),
    Column("n_useful_groups", Integer),
    Column("useful_group_rate", Float),
    Column("collect_sec", Float),
    Column("train_sec", Float),
    Column("benchmark_score", Float),
    Column("proposer_valid_rate", Float),
    Column("checkpoint", Text),
    Column("started_at", DateTime, server_default=func.now()),
    Column("finished_at", DateTime),
)

metrics = Table(
    "metrics",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run", String(128), nullable=False),
    Column("step", Integer, nullable=False),
    Column("name", String(128), nullable=False),
    Column("value", Float, nullable=False),
    UniqueConstraint("run", "step", "name", name="uq_metric"),
)

#: version -> list of DDL statements (beyond create_all of version 1).
MIGRATIONS: dict[int, list[str]] = {
    1: [],  # initial schema, created from ``metadata``
    2: ["ALTER TABLE attempts ADD COLUMN episode_path TEXT"],  # proposer samples are the episodes themselves
    3: [  # an evolved task keeps its parent (autoenv propose --method evolve)
        "ALTER TABLE tasks ADD COLUMN parent_name VARCHAR(256)",
        "ALTER TABLE tasks ADD COLUMN parent_hash VARCHAR(64)",
        "ALTER TABLE attempts ADD COLUMN parent_name VARCHAR(256)",
        "ALTER TABLE attempts ADD COLUMN parent_hash VARCHAR(64)",
    ],
}
LATEST = max(MIGRATIONS)
