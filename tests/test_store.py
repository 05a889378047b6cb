"""The run store and the output folder under concurrency: writers that
race on one run, sweeps that overlap in one folder, workers whose parent
is killed."""

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netreturn.files import atomic_open, atomic_write
from netreturn.runner import Store


class Key:
    """A spec as the store sees one: anything with a ``key()``."""

    def __init__(self, key: str):
        self._key = key

    def key(self) -> str:
        return self._key


def result_of(key: str, writer: int) -> dict:
    # Large enough (about 200 kB) that writes take long enough to overlap.
    return {"key": key, "writer": writer, "flows": {"fct_s": [float(i) for i in range(20_000)]}, "end": True}


def complete(r: dict | None, key: str) -> bool:
    return r is not None and r["key"] == key and r["end"] and len(r["flows"]["fct_s"]) == 20_000


def writer(out: str, writer_id: int, rounds: int, errors) -> None:
    store = Store(out)
    try:
        for n in range(rounds):
            for key in ("shared-a", "shared-b", f"own-{writer_id}-{n % 5}"):
                store.put(Key(key), result_of(key, writer_id))
    except BaseException as e:
        errors.put(f"writer {writer_id}: {type(e).__name__}: {e}")


def reader(out: str, rounds: int, errors) -> None:
    store = Store(out)
    try:
        for _ in range(rounds):
            for key in ("shared-a", "shared-b"):
                r = store.get(Key(key))
                if r is not None and not complete(r, key):
                    errors.put(f"reader saw a partial run {key}")
    except BaseException as e:
        errors.put(f"reader: {type(e).__name__}: {e}")


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_processes_writing_the_same_and_different_runs_into_one_store_lose_nothing(tmp_path):
    ctx = multiprocessing.get_context("fork")
    errors = ctx.Queue()
    writers, rounds = 6, 40
    procs = [ctx.Process(target=writer, args=(str(tmp_path), w, rounds, errors)) for w in range(writers)]
    procs.append(ctx.Process(target=reader, args=(str(tmp_path), 2 * rounds, errors)))
    t0 = time.monotonic()
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert found == [], found[:5]
    store = Store(tmp_path)
    keys = ["shared-a", "shared-b"] + [f"own-{w}-{n}" for w in range(writers) for n in range(5)]
    for key in keys:
        assert complete(store.get(Key(key)), key), key
    left = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert left == sorted(f"{k}.json" for k in keys), "no temporary file is left behind"
    print(f"{writers} writers x {rounds * 3} writes and a reader: {time.monotonic() - t0:.1f} s")


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_file(tmp_path):
    path = tmp_path / "runs.csv"
    atomic_write(path, "old\n")
    with pytest.raises(RuntimeError):
        with atomic_open(path) as f:
            f.write("half of a new tab")
            raise RuntimeError("disk full")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["runs.csv"]


def test_an_atomically_written_file_has_the_permissions_open_would_give(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o644


def children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def alive(pid: int) -> bool:
    """Running, not a zombie (a container's init may never reap the orphans)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_workers_of_a_sweep_exit_within_seconds_when_its_process_is_killed(tmp_path):
    # Runs of about 20 s each, so that the workers are mid-run when the parent dies.
    from netreturn.scenarios import resolve

    text = resolve("ewt/scenario2").read_text()
    assert '\nstop = "600s"\n' in text
    (tmp_path / "long.toml").write_text(text.replace('\nstop = "600s"\n', '\nstop = "6000s"\n'))
    parent = subprocess.Popen([sys.executable, "-m", "netreturn.cli", "run", str(tmp_path / "long.toml"),
                               "--set", "file_bytes=10GB", "--seeds", "4", "--jobs", "2", "--no-plots", "-q",
                               "--out", str(tmp_path / "out")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        t0 = time.monotonic()
        while len(workers) < 2 and time.monotonic() - t0 < 30 and parent.poll() is None:
            time.sleep(0.1)
            workers = children(parent.pid)
        assert len(workers) >= 2, f"no workers seen (the sweep's exit status: {parent.poll()})"
        time.sleep(1.0)  # into their first runs
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        killed = time.monotonic()
        while any(alive(w) for w in workers) and time.monotonic() - killed < 5:
            time.sleep(0.05)
        survived = time.monotonic() - killed
        assert not any(alive(w) for w in workers), f"workers {workers} still running 5 s after their parent died"
        print(f"{len(workers)} workers gone {survived:.2f} s after the parent's SIGKILL")
    finally:
        for w in workers:
            if alive(w):
                os.kill(w, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def cli(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "netreturn.cli", *argv], capture_output=True, text=True,
                          timeout=timeout)


QUICK = ["ewt/scenario2", "--set", "flows=2", "--set", "file_bytes=100kB", "--seed", "1", "--no-plots", "-q"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_second_sweep_into_a_folder_in_use_is_refused_and_runs_once_the_first_is_killed(tmp_path):
    from netreturn.scenarios import resolve

    text = resolve("ewt/scenario2").read_text()
    (tmp_path / "long.toml").write_text(text.replace('\nstop = "600s"\n', '\nstop = "6000s"\n'))
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-m", "netreturn.cli", "run", str(tmp_path / "long.toml"),
                              "--set", "file_bytes=10GB", "--seeds", "2", "--jobs", "2", "--no-plots", "-q",
                              "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        lock = out / ".netreturn.lock"
        t0 = time.monotonic()
        while not (lock.is_file() and f"PID {first.pid}," in lock.read_text()) and time.monotonic() - t0 < 30:
            time.sleep(0.1)
        assert f"PID {first.pid}," in lock.read_text()
        t1 = time.monotonic()
        second = cli("run", *QUICK, "--out", str(out))
        assert time.monotonic() - t1 < 10
        assert second.returncode == 2, second.stderr
        assert "Traceback" not in second.stderr
        assert f"{out} is in use by another sweep (PID {first.pid}," in second.stderr
        assert "long.toml" in second.stderr and "--out" in second.stderr
        assert not (out / "runs.csv").exists(), "the refused sweep wrote nothing"

        workers = children(first.pid)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        killed = time.monotonic()
        while any(alive(w) for w in workers) and time.monotonic() - killed < 5:
            time.sleep(0.05)
        # The dead sweep's lock file is still there, naming it: taken over.
        assert f"PID {first.pid}," in lock.read_text()
        again = cli("run", *QUICK, "--out", str(out))
        assert again.returncode == 0, again.stderr
        assert len((out / "runs.csv").read_text().splitlines()) == 2  # header and the one run
    finally:
        for w in workers:
            if alive(w):
                os.kill(w, signal.SIGKILL)
        if first.poll() is None:
            first.kill()
            first.wait()


def test_a_process_holds_its_folder_again_without_refusing_itself_and_others_see_it_held(tmp_path):
    from netreturn.files import FolderLock

    with FolderLock(tmp_path):
        with FolderLock(tmp_path):  # the command line, then the runner
            pass
        # Still held after the inner release: another process is refused.
        probe = subprocess.run([sys.executable, "-c", "from netreturn.files import FolderLock\n"
                                f"FolderLock({str(tmp_path)!r}).acquire()"], capture_output=True, text=True)
        assert probe.returncode == 1 and "FolderInUse" in probe.stderr and f"PID {os.getpid()}," in probe.stderr
    probe = subprocess.run([sys.executable, "-c", "from netreturn.files import FolderLock\n"
                            f"FolderLock({str(tmp_path)!r}).acquire()"], capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
