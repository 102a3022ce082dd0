"""The flywheel store: every task, attempt, rollout, group and training step.

A plain path means SQLite (WAL journal, so validation workers and the
flywheel can write at once); any SQLAlchemy URL (``postgresql://...``) serves
several machines. Writes are idempotent on natural keys, which is what lets an
interrupted flywheel resume without losing or duplicating rows.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, func, insert, inspect, select, update
from sqlalchemy.exc import IntegrityError

from autoenv.store import schema as s


def db_url(db: str | Path) -> str:
    text = str(db)
    if "://" in text:
        return text
    path = Path(text).expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _has_column(conn: Any, statement: str) -> bool:
    """Whether ``statement`` adds a column (``ALTER TABLE t ADD COLUMN c ...``) the table has already: a store whose
    version record is older than its tables (its columns came with a later ``create_all``) is upgraded all the same,
    where SQLite would refuse the duplicate column."""
    added = re.match(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", statement, re.I)
    if added is None:
        return False
    return added.group(2) in {c["name"] for c in inspect(conn).get_columns(added.group(1))}


class Store:
    def __init__(self, db: str | Path):
        self.url = db_url(db)
        self.engine: Engine = create_engine(self.url, future=True)
        if self.url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.migrate()

    # -- schema --------------------------------------------------------------------

    def version(self) -> int:
        with self.engine.connect() as conn:
            if not self.engine.dialect.has_table(conn, "schema_version"):
                return 0
            return conn.execute(select(func.max(s.schema_version.c.version))).scalar() or 0

    def migrate(self) -> int:
        current = self.version()
        if current > s.LATEST:
            raise RuntimeError(
                f"{self.url}: store schema v{current} is newer than this autoenv (v{s.LATEST}); upgrade autoenv"
            )
        with self.engine.begin() as conn:
            if current == 0:  # a new store gets the latest schema at once
                s.metadata.create_all(conn)
                conn.execute(insert(s.schema_version).values(version=s.LATEST))
                return s.LATEST
            for version in range(current + 1, s.LATEST + 1):
                for statement in s.MIGRATIONS[version]:
                    if not _has_column(conn, statement):
                        conn.exec_driver_sql(statement)
                conn.execute(insert(s.schema_version).values(version=version))
        return s.LATEST

    # -- runs ----------------------------------------------------------------------

    def ensure_run(self, name: str, config: dict[str, Any]) -> dict[str, Any]:
        """Register a run; on resume the stored config wins so a run stays one experiment."""
        with self.engine.begin() as conn:
            row = conn.execute(select(s.runs.c.config).where(s.runs.c.name == name)).first()
            if row is not None:
                return row[0]
            conn.execute(insert(s.runs).values(name=name, config=config))
            return config

    def run_configs(self) -> dict[str, dict[str, Any]]:
        """Each run's stored configuration, oldest run first."""
        with self.engine.connect() as conn:
            return {
                r[0]: r[1] for r in conn.execute(select(s.runs.c.name, s.runs.c.config).order_by(s.runs.c.created_at))
            }

    def run_names(self) -> list[str]:
        with self.engine.connect() as conn:
            return [r[0] for r in conn.execute(select(s.runs.c.name).order_by(s.runs.c.created_at))]

    # -- tasks and attempts --------------------------------------------------------

    def upsert_task(self, **values: Any) -> None:
        with self.engine.begin() as conn:
            exists = conn.execute(select(s.tasks.c.hash).where(s.tasks.c.hash == values["hash"])).first()
            if exists:
                conn.execute(
                    update(s.tasks)
                    .where(s.tasks.c.hash == values["hash"])
                    .values(**{k: v for k, v in values.items() if v is not None})
                )
            else:
                conn.execute(insert(s.tasks).values(**values))

    def task(self, task_hash: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(s.tasks).where(s.tasks.c.hash == task_hash)).mappings().first()
            return dict(row) if row else None

    def _rows(self, table: Any, order: list[str], **where: Any) -> list[dict[str, Any]]:
        """The rows of ``table`` whose columns equal the ``where`` values given (None: any), in ``order``."""
        query = select(table)
        for column, value in where.items():
            if value is not None:
                query = query.where(table.c[column] == value)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query.order_by(*(table.c[c] for c in order))).mappings()]

    def tasks(self, **where: Any) -> list[dict[str, Any]]:
        return self._rows(s.tasks, ["created_at"], **where)

    def _insert_once(self, table: Any, values: dict[str, Any]) -> bool:
        """Insert a row under its natural key; False if it was already there (a resumed step redoes nothing)."""
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(table).values(**values))
            return True
        except IntegrityError:
            return False

    def record_attempt(self, **values: Any) -> bool:
        """Insert an attempt once per (run, attempt_key); False if it was already there."""
        return self._insert_once(s.attempts, values)

    def attempts(self, run: str | None = None, step: int | None = None) -> list[dict[str, Any]]:
        return self._rows(s.attempts, ["id"], run=run, step=step)

    # -- groups and rollouts -------------------------------------------------------

    def group_id(self, run: str, step: int, task_hash: str, role: str, size: int) -> int:
        """The group's id, creating it on first use (idempotent)."""
        key = (
            (s.groups.c.run == run)
            & (s.groups.c.step == step)
            & (s.groups.c.task_hash == task_hash)
            & (s.groups.c.role == role)
        )
        with self.engine.begin() as conn:
            row = conn.execute(select(s.groups.c.id).where(key)).first()
            if row:
                return row[0]
            try:
                return conn.execute(
                    insert(s.groups).values(run=run, step=step, task_hash=task_hash, role=role, size=size)
                ).inserted_primary_key[0]
            except IntegrityError:
                pass
        with self.engine.connect() as conn:
            return conn.execute(select(s.groups.c.id).where(key)).scalar_one()

    def done_indices(self, group_id: int) -> set[int]:
        with self.engine.connect() as conn:
            return {r[0] for r in conn.execute(select(s.rollouts.c["index"]).where(s.rollouts.c.group_id == group_id))}

    def add_rollout(self, **values: Any) -> bool:
        """Insert a rollout once per (group, index); False if it was already there."""
        return self._insert_once(s.rollouts, values)

    def rollouts(
        self, run: str | None = None, step: int | None = None, group_id: int | None = None
    ) -> list[dict[str, Any]]:
        return self._rows(s.rollouts, ["id"], run=run, step=step, group_id=group_id)

    def finish_group(
        self, group_id: int, rewards: list[float], advantages: list[float], collection_sec: float
    ) -> dict[str, Any]:
        mean = statistics.fmean(rewards) if rewards else None
        std = statistics.pstdev(rewards) if len(rewards) > 1 else 0.0
        useful = bool(rewards) and std > 0
        with self.engine.begin() as conn:
            conn.execute(
                update(s.groups)
                .where(s.groups.c.id == group_id)
                .values(mean_reward=mean, std_reward=std, useful=useful, collection_sec=collection_sec)
            )
            for index, advantage in enumerate(advantages):
                conn.execute(
                    update(s.rollouts)
                    .where((s.rollouts.c.group_id == group_id) & (s.rollouts.c["index"] == index))
                    .values(advantage=advantage)
                )
        return {"mean": mean, "std": std, "useful": useful}

    def groups(self, run: str | None = None, step: int | None = None) -> list[dict[str, Any]]:
        return self._rows(s.groups, ["id"], run=run, step=step)

    # -- training steps and metrics ------------------------------------------------

    def step_row(self, run: str, step: int) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = (
                conn.execute(select(s.train_steps).where((s.train_steps.c.run == run) & (s.train_steps.c.step == step)))
                .mappings()
                .first()
            )
            return dict(row) if row else None

    def start_step(self, run: str, step: int, policy_version: int) -> dict[str, Any]:
        row = self.step_row(run, step)
        if row is None:
            with self.engine.begin() as conn:
                conn.execute(
                    insert(s.train_steps).values(
                        run=run, step=step, status="collecting", policy_version_in=policy_version
                    )
                )
            row = self.step_row(run, step)
        assert row is not None
        return row

    def update_step(self, run: str, step: int, **values: Any) -> None:
        if values.get("status") == "done":
            values.setdefault("finished_at", datetime.now(UTC))
        with self.engine.begin() as conn:
            conn.execute(
                update(s.train_steps)
                .where((s.train_steps.c.run == run) & (s.train_steps.c.step == step))
                .values(**values)
            )

    def steps(self, run: str | None = None) -> list[dict[str, Any]]:
        return self._rows(s.train_steps, ["run", "step"], run=run)

    def record_metrics(self, run: str, step: int, values: dict[str, float]) -> None:
        with self.engine.begin() as conn:
            for name, value in values.items():
                conn.execute(
                    s.metrics.delete().where(
                        (s.metrics.c.run == run) & (s.metrics.c.step == step) & (s.metrics.c.name == name)
                    )
                )
                conn.execute(insert(s.metrics).values(run=run, step=step, name=name, value=float(value)))

    def metrics(self, run: str | None = None) -> list[dict[str, Any]]:
        return self._rows(s.metrics, ["step"], run=run)

    def count(self, table: str, **where: Any) -> int:
        t = s.metadata.tables[table]
        query = select(func.count()).select_from(t)
        for key, value in where.items():
            query = query.where(t.c[key] == value)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def close(self) -> None:
        self.engine.dispose()


def bulk_rows(store: Store, table: str, rows: Iterable[dict[str, Any]]) -> int:
    """Insert many rows in one transaction (benchmarks and imports)."""
    rows = list(rows)
    with store.engine.begin() as conn:
        conn.execute(insert(s.metadata.tables[table]), rows)
    return len(rows)
