"""How a pipeline job reaches the lake: through a running proxy over the wire protocol
(:class:`RemoteLake`, with the proxy's own authentication), or in-process on a stopped proxy's
data directory (:class:`LocalLake`, holding the directory's lock). Both offer the same four
steps: read a table's files at a held snapshot, create a table, commit a staged changeset,
adopt a checkpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from decoding.catalog import Table
from decoding.errors import PgError
from walsender_proxy.lake.bulk import TableLayout


class LakeAccess(Protocol):
    def layout(self, table: str) -> TableLayout | None:
        """The table's files at a snapshot held until :meth:`release` (None: no such table)."""

    def release(self) -> None: ...

    def create_table(self, name: str, columns: list[tuple[str, str, bool]], key: list[str]) -> None: ...

    def staging_dir(self) -> Path: ...

    def commit(self, table: str, staging: Path, based_on_csn: int, rows_per_transaction: int) -> dict[str, Any]: ...

    def install_checkpoint(self, table: str, csn: int, path: Path) -> dict[str, Any]: ...

    def close(self) -> None: ...


class LocalLake:
    """The lake opened in this process (the proxy must be stopped: 55006 otherwise)."""

    def __init__(self, data_dir: str | Path, config: dict[str, Any] | None = None) -> None:
        from walsender_proxy.config import lake_settings
        from walsender_proxy.lake import Lake

        self.lake = Lake(data_dir, lake_settings(config or {}))
        self._tx: Any = None

    def layout(self, table: str) -> TableLayout | None:
        from walsender_proxy.lake.bulk import table_layout
        from walsender_proxy.lake.transaction import Isolation

        self.release()
        tx = self.lake.begin(Isolation.REPEATABLE_READ, read_only=True)
        csn = tx.statement_csn()
        try:
            t = tx.catalog().resolve_table(table, self.lake.search_path)
        except PgError as e:
            tx.abort()
            if e.sqlstate == "42P01":
                return None
            raise
        self._tx = tx
        return table_layout(self.lake, t, csn)

    def release(self) -> None:
        if self._tx is not None:
            self._tx.abort()
            self._tx = None

    def create_table(self, name: str, columns: list[tuple[str, str, bool]], key: list[str]) -> None:
        with self.lake.begin() as tx:
            tx.create_table(name, columns, primary_key=key)

    def staging_dir(self) -> Path:
        return self.lake.staging_dir()

    def commit(self, table: str, staging: Path, based_on_csn: int, rows_per_transaction: int) -> dict[str, Any]:
        from walsender_proxy.lake.bulk import commit_changeset

        res = commit_changeset(
            self.lake, table, staging, based_on_csn=based_on_csn,
            rows_per_transaction=rows_per_transaction,
        )
        return res.to_json()

    def install_checkpoint(self, table: str, csn: int, path: Path) -> dict[str, Any]:
        from walsender_proxy.lake.bulk import install_checkpoint

        return install_checkpoint(self.lake, table, csn, path)

    def close(self) -> None:
        self.release()
        self.lake.close()


class RemoteLake:
    """A running proxy, reached with libpq connection parameters (``host=… port=… user=…``
    or a URI); two connections: one holds the read snapshot, one commits."""

    def __init__(self, dsn: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise PgError(
                "0A000", "committing through a running proxy needs psycopg",
                hint='pip install "walsender-proxy[spark]"',
            ) from None
        self._psycopg = psycopg
        self.dsn = dsn
        self._reader = self._connect(autocommit=True)  # BEGIN/ROLLBACK sent explicitly
        self._writer = self._connect(autocommit=True)

    def _connect(self, autocommit: bool) -> Any:
        try:
            return self._psycopg.connect(self.dsn, autocommit=autocommit)
        except self._psycopg.OperationalError as e:
            raise PgError("08006", f"could not connect to the proxy: {e}".strip()) from None

    def _call(self, conn: Any, sql: str, args: tuple[Any, ...]) -> Any:
        try:
            return conn.execute(sql, args).fetchone()[0]
        except self._psycopg.Error as e:
            diag = e.diag
            raise PgError(
                diag.sqlstate or "XX000", diag.message_primary or str(e),
                detail=diag.message_detail, hint=diag.message_hint,
            ) from None

    def layout(self, table: str) -> TableLayout | None:
        self.release()
        self._reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try:
            text = self._call(self._reader, "SELECT walsender_proxy_table_layout(%s)", (table,))
        except PgError as e:
            self.release()
            if e.sqlstate == "42P01":
                return None
            raise
        return TableLayout.from_json(json.loads(text))

    def release(self) -> None:
        if self._reader.info.transaction_status != self._psycopg.pq.TransactionStatus.IDLE:
            self._reader.execute("ROLLBACK")

    def create_table(self, name: str, columns: list[tuple[str, str, bool]], key: list[str]) -> None:
        from psycopg import sql

        defs = [
            sql.SQL("{} {}{}").format(
                sql.Identifier(n), sql.SQL(ty), sql.SQL(" NOT NULL" if nn else "")
            )
            for n, ty, nn in columns
        ]
        if key:
            defs.append(sql.SQL("PRIMARY KEY ({})").format(sql.SQL(", ").join(map(sql.Identifier, key))))
        parts = [sql.Identifier(p) for p in name.split(".")]
        stmt = sql.SQL("CREATE TABLE {} ({})").format(sql.SQL(".").join(parts), sql.SQL(", ").join(defs))
        try:
            self._writer.execute(stmt)
        except self._psycopg.Error as e:
            raise PgError(e.diag.sqlstate or "XX000", e.diag.message_primary or str(e)) from None

    def staging_dir(self) -> Path:
        return Path(self._call(self._writer, "SELECT walsender_proxy_staging_dir()", ()))

    def commit(self, table: str, staging: Path, based_on_csn: int, rows_per_transaction: int) -> dict[str, Any]:
        text = self._call(
            self._writer,
            "SELECT walsender_proxy_commit_changeset(%s, %s, %s::bigint, %s::bigint)",
            (table, str(staging), based_on_csn, rows_per_transaction),
        )
        return json.loads(text)

    def install_checkpoint(self, table: str, csn: int, path: Path) -> dict[str, Any]:
        text = self._call(
            self._writer,
            "SELECT walsender_proxy_install_checkpoint(%s, %s::bigint, %s)",
            (table, csn, str(path)),
        )
        return json.loads(text)

    def close(self) -> None:
        for c in (self._reader, self._writer):
            c.close()


def open_access(*, data_dir: str | None = None, dsn: str | None = None,
                config: dict[str, Any] | None = None) -> LakeAccess:
    if (data_dir is None) == (dsn is None):
        raise PgError("22023", "give either a data directory (-D) or a connection string (--dsn)")
    if dsn is not None:
        return RemoteLake(dsn)
    return LocalLake(data_dir, config)  # type: ignore[arg-type]


__all__ = ["LakeAccess", "LocalLake", "RemoteLake", "Table", "open_access"]
