"""The command lines of snaprepl's Spark jobs, one typed value per job: the submitter builds it and
calls :meth:`to_argv`, the job's ``main`` calls :meth:`from_argv`. Names and numbers only (credentials
travel in the connections file). Imports nothing heavy: both sides of spark-submit load it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

#: Rows per commit of a sync step when the publication sets none (its SP_ROWS_PER_COMMIT).
DEFAULT_ROWS_PER_COMMIT = 100
SYNC_ACTIONS = ("init", "pull", "push", "sync")


@dataclass(frozen=True)
class RefreshJobArgs:
    """``spark_jobs/refresh_snapshot.py``'s arguments: refresh one snapshot."""

    snapshot: str
    mode: str = "incremental"
    fallback_complete: bool = False
    tolerance_minutes: int = 15
    commit_rows: int = 50_000
    max_partitions: int = 8
    catalog_conn: str = "snaprepl_catalog"
    run_id: str | None = None

    def to_argv(self) -> list[str]:
        args = [
            "--snapshot", self.snapshot, "--mode", self.mode,
            "--tolerance-minutes", str(self.tolerance_minutes),
            "--commit-rows", str(self.commit_rows),
            "--max-partitions", str(self.max_partitions),
            "--catalog-conn", self.catalog_conn,
        ]  # fmt: skip
        args = [*args, "--run-id", self.run_id] if self.run_id else args
        return [*args, "--fallback-complete"] if self.fallback_complete else args

    @classmethod
    def from_argv(cls, argv: Sequence[str] | None) -> RefreshJobArgs:
        parser = argparse.ArgumentParser(prog="refresh_snapshot", description="Refresh one snaprepl snapshot.")
        parser.add_argument("--snapshot", required=True, help="SN_NAME of the snapshot")
        parser.add_argument("--mode", choices=("incremental", "complete"), default=cls.mode)
        parser.add_argument("--fallback-complete", action="store_true")
        parser.add_argument("--tolerance-minutes", type=int, default=cls.tolerance_minutes)
        parser.add_argument("--commit-rows", type=int, default=cls.commit_rows)
        parser.add_argument("--max-partitions", type=int, default=cls.max_partitions)
        parser.add_argument("--catalog-conn", default=cls.catalog_conn)
        parser.add_argument("--run-id", default=None)
        return cls(**vars(parser.parse_args(argv)))


@dataclass(frozen=True)
class SyncJobArgs:
    """``spark_jobs/sync_publication.py``'s arguments: one sync action of one publication."""

    item: str
    action: str
    server: str | None = None
    rows_per_commit: int = DEFAULT_ROWS_PER_COMMIT
    atomic: bool = False
    tolerance_minutes: int = 15
    commit_rows: int = 50_000
    catalog_conn: str = "snaprepl_catalog"
    run_id: str | None = None
    reinit_detached: bool = False

    def to_argv(self) -> list[str]:
        args = [
            "--item", self.item, "--action", self.action, "--rows-per-commit", str(self.rows_per_commit),
            "--tolerance-minutes", str(self.tolerance_minutes),
            "--commit-rows", str(self.commit_rows),
            "--catalog-conn", self.catalog_conn,
        ]  # fmt: skip
        args = [*args, "--run-id", self.run_id] if self.run_id else args
        args = [*args, "--server", self.server] if self.server else args
        args = [*args, "--reinit-detached"] if self.reinit_detached else args
        return [*args, "--atomic"] if self.atomic else args

    @classmethod
    def from_argv(cls, argv: Sequence[str] | None) -> SyncJobArgs:
        parser = argparse.ArgumentParser(prog="sync_publication", description="Sync one snaprepl publication.")
        parser.add_argument("--item", required=True, help="SP_ITEM of the publication")
        parser.add_argument("--action", choices=SYNC_ACTIONS, required=True)
        parser.add_argument("--server", help="subscriber (init, pull, push)")
        parser.add_argument("--rows-per-commit", type=int, default=cls.rows_per_commit)
        parser.add_argument("--atomic", action="store_true", help="init: apply the whole load in one transaction")
        parser.add_argument("--tolerance-minutes", type=int, default=cls.tolerance_minutes)
        parser.add_argument("--commit-rows", type=int, default=cls.commit_rows)
        parser.add_argument("--catalog-conn", default=cls.catalog_conn)
        parser.add_argument("--run-id", default=None)
        parser.add_argument("--reinit-detached", action="store_true", help="a detached subscriber's push reloads it")
        return cls(**vars(parser.parse_args(argv)))


@dataclass(frozen=True)
class VerifyJobArgs:
    """``spark_jobs/verify_snapshot.py``'s arguments: verify (or repair) one snapshot."""

    snapshot: str
    repair: bool = False
    where: str | None = None
    commit_rows: int = 50_000
    max_partitions: int = 8
    tolerance_minutes: int = 15
    catalog_conn: str = "snaprepl_catalog"
    run_id: str | None = None

    def to_argv(self) -> list[str]:
        args = [
            "--snapshot", self.snapshot, "--commit-rows", str(self.commit_rows),
            "--max-partitions", str(self.max_partitions), "--tolerance-minutes", str(self.tolerance_minutes),
            "--catalog-conn", self.catalog_conn,
        ]  # fmt: skip
        args = [*args, "--run-id", self.run_id] if self.run_id else args
        args = [*args, "--where", self.where] if self.where else args
        return [*args, "--repair"] if self.repair else args

    @classmethod
    def from_argv(cls, argv: Sequence[str] | None) -> VerifyJobArgs:
        parser = argparse.ArgumentParser(prog="verify_snapshot", description="Verify one snaprepl snapshot.")
        parser.add_argument("--snapshot", required=True, help="SN_NAME of the snapshot")
        parser.add_argument("--repair", action="store_true")
        parser.add_argument("--where", default=None, help="condition limiting the rows compared")
        parser.add_argument("--commit-rows", type=int, default=cls.commit_rows)
        parser.add_argument("--max-partitions", type=int, default=cls.max_partitions)
        parser.add_argument("--tolerance-minutes", type=int, default=cls.tolerance_minutes)
        parser.add_argument("--catalog-conn", default=cls.catalog_conn)
        parser.add_argument("--run-id", default=None)
        return cls(**vars(parser.parse_args(argv)))
