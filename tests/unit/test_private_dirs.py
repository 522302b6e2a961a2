"""Private directories of Spark job runs under concurrency: many prepare()/cleanup() calls at once, in
threads and in processes, some of them "killed" (leaving their files), never trip over each other and
never remove a live run's files."""

from __future__ import annotations

import multiprocessing
import os
import stat
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import pytest

from snaprepl.connections.lookup import ConnectionInfo
from snaprepl.errors import SnapreplError
from snaprepl.settings import Settings

CONNECTIONS = [ConnectionInfo("c1", "postgres", host="h", login="u", password="pw")]
ROUNDS = 60


def _churn(rounds: int) -> list[str]:
    """prepare() then cleanup(), ``rounds`` times; the errors seen, as text."""
    from snaprepl.submit.submission import prepare

    settings = Settings()
    errors = []
    for i in range(rounds):
        try:
            submission = prepare(
                job="refresh_snapshot",
                module_file=Path(__file__),
                args=[],
                connections=CONNECTIONS,
                settings=settings,
                run_id=f"{os.getpid()}-{threading.get_ident()}-{i}",
                name="x",
            )
            submission.result_file.write_text("{}")  # what the job writes
            assert submission.connections_file.read_text().startswith("{")  # nobody removed it under us
            assert submission.result_file.read_text() == "{}"
            submission.cleanup()
        except Exception:
            errors.append(traceback.format_exc(limit=3))
    return errors


def _process(rounds: int, queue: multiprocessing.Queue) -> None:
    queue.put(_churn(rounds))


def _killed_submitter() -> None:
    """A submitter SIGKILLed after prepare(): its files stay behind."""
    code = (
        "import os, signal; from pathlib import Path; from snaprepl.submit.submission import prepare; "
        "from snaprepl.settings import Settings; from snaprepl.connections.lookup import ConnectionInfo; "
        "prepare(job='refresh_snapshot', module_file=Path('x.py'), args=[], settings=Settings(), run_id='k', "
        "name='x', connections=[ConnectionInfo('c1', 'postgres', password='pw')]); os.kill(os.getpid(), signal.SIGKILL)"
    )
    subprocess.run([sys.executable, "-c", code], env=os.environ.copy(), check=False)


@pytest.fixture(autouse=True)
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("AIRFLOW_CONN_SNAPREPL_SPARK", '{"conn_type": "spark", "host": "local[1]"}')
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    return tmp_path / f"snaprepl-{os.getuid()}"


def test_concurrent_prepare_and_cleanup_in_threads_and_processes(own_tmp: Path) -> None:
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue = context.Queue()
    processes = [context.Process(target=_process, args=(ROUNDS, queue)) for _ in range(3)]
    results: list[list[str]] = []
    threads = [threading.Thread(target=lambda: results.append(_churn(ROUNDS))) for _ in range(4)]
    killers = [threading.Thread(target=_killed_submitter) for _ in range(2)]
    for worker in [*processes, *threads, *killers]:
        worker.start()
    for thread in [*threads, *killers]:
        thread.join()
    results += [queue.get(timeout=300) for _ in processes]
    for process in processes:
        process.join()
    errors = [e for r in results for e in r]
    assert errors == [], f"{len(errors)} of {7 * ROUNDS} calls failed, e.g.:\n{errors[0]}"
    _churn(1)  # the next run sweeps what the killed submitters left
    assert list(own_tmp.iterdir()) == [], "files of killed submitters are swept"
    assert stat.S_IMODE(own_tmp.stat().st_mode) == 0o700


def test_a_live_run_keeps_its_directory_and_a_dead_ones_goes(own_tmp: Path) -> None:
    from snaprepl.spark import rundir

    mine = rundir.new_run_dir()
    (mine / "result.json").write_text("{}")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        start = Path(f"/proc/{sleeper.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        theirs = own_tmp / f"run-{sleeper.pid}-{start}-abc"
        theirs.mkdir(mode=0o700)
        dead = own_tmp / f"run-{sleeper.pid}-{int(start) + 1}-abc"  # same pid, another process: gone
        dead.mkdir(mode=0o700)
        legacy_old, legacy_new = own_tmp / "snaprepl-conns-old.json", own_tmp / "result-new.json"
        legacy_old.write_text("{}")
        legacy_new.write_text("{}")
        os.utime(legacy_old, (time.time() - 2 * 86400,) * 2)
        rundir.sweep(own_tmp)
        assert mine.exists() and theirs.exists() and legacy_new.exists()
        assert not dead.exists() and not legacy_old.exists()
        assert stat.S_IMODE(mine.stat().st_mode) == 0o700
    finally:
        sleeper.kill()
        sleeper.wait()
    rundir.sweep(own_tmp)
    assert not theirs.exists(), "its submitter ended"


def test_a_shared_parent_directory_is_refused(own_tmp: Path) -> None:
    from snaprepl.spark import rundir

    own_tmp.mkdir(mode=0o755)
    os.chmod(own_tmp, 0o755)
    with pytest.raises(SnapreplError, match="not a directory private to this user"):
        rundir.private_parent()
    os.rmdir(own_tmp)
    os.symlink("/tmp", own_tmp)
    with pytest.raises(SnapreplError, match="not a directory private to this user"):
        rundir.private_parent()


def test_job_result_file_is_private(own_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from snaprepl.spark.entrypoint import RESULT_FILE_ENV, write_result

    target = own_tmp.parent / "result.json"
    monkeypatch.setenv(RESULT_FILE_ENV, str(target))
    previous = os.umask(0o022)
    try:
        write_result({"ok": True})
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
