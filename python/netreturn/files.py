"""Files that other processes write or read at the same time: the run
store, the tables, the manifest of an output folder.

A file is written whole under a temporary name of its own beside it, then
renamed over the final name (atomic on POSIX within one file system): a
reader sees the old file or the new one, never half of one, and two writers
of the same file each rename a complete file of their own, the last one
winning. There is no fsync: after a power cut a file may be empty or torn,
which the run store treats as a run not made yet (it is run again).

:class:`FolderLock` keeps a second sweep out of an output folder while one
writes into it.
"""

from __future__ import annotations

import datetime as _dt
import errno
import os
import secrets
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator

try:
    import fcntl
except ImportError:  # Windows: no locking there (see FolderLock)
    fcntl = None  # type: ignore[assignment]


def _temp_beside(path: Path) -> tuple[int, Path]:
    """A new file beside ``path`` (same directory, so the rename stays in
    one file system), named after it and unique across processes and
    threads. Created with mode 0o666 less the umask, as ``open`` would:
    ``tempfile.mkstemp`` makes 0o600 files, which would leave the renamed
    result unreadable by the rest of a group sharing the folder."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path))


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO]:
    """``open(path, mode)`` whose file appears at ``path`` complete, when
    the block ends without an exception; otherwise ``path`` is left as it
    was and the temporary file is removed."""
    if not mode.startswith("w"):
        raise ValueError(f"atomic_open writes a new file; mode {mode!r} is not a 'w' mode")
    path = Path(path)
    fd, tmp = _temp_beside(path)
    try:
        with open(fd, mode, **kwargs) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, data: str | bytes, **kwargs: Any) -> None:
    """Writes ``data`` to ``path`` through :func:`atomic_open`."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w", **kwargs) as f:
        f.write(data)


class FolderInUse(RuntimeError):
    """Another live process is running a sweep into the folder."""


class FolderLock:
    """An output folder written by one sweep at a time.

    Two sweeps into one folder would both run every missing run, and each
    would write the tables (runs.csv, summary.csv, flows.csv) of its own
    sweep over the other's, whichever finished last. The second one is
    refused instead, with a message naming the folder and the first one's
    PID and command.

    ``<folder>/.netreturn.lock`` is locked with ``flock`` and holds its
    owner's PID and command. The kernel drops the lock when the owner dies,
    however it dies (SIGKILL included): a lock file left by a dead process
    is simply taken over. Worker processes forked while the lock is held
    share it; they exit with their parent (``runner.worker_pool``).
    Reentrant within a process: ``netreturn run`` holds its folder for the
    whole command and the runner asks for it again. Without ``fcntl``
    (Windows) nothing is locked.
    """

    NAME = ".netreturn.lock"
    _held: dict[Path, list] = {}  # folder -> [its open lock file, depth], in this process

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self._key: Path | None = None

    def acquire(self) -> "FolderLock":
        """Holds the folder (creating it), or raises :class:`FolderInUse`."""
        self.folder.mkdir(parents=True, exist_ok=True)
        key = self.folder.resolve()
        held = self._held.get(key)
        if held is not None:
            held[1] += 1
            self._key = key
            return self
        f = None
        if fcntl is not None:
            f = open(self.folder / self.NAME, "a+")
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                owner = f.read().strip() or "a process that has not said which yet"
                f.close()
                raise FolderInUse(f"{self.folder} is in use by another sweep ({owner}): two sweeps into one "
                                  "folder would each redo the missing runs and overwrite the other's tables; "
                                  "wait for it to finish, or write into another folder (--out)") from None
            except BaseException:
                f.close()
                raise
            # Ours: say whose (in place: the lock belongs to the file, not its name).
            started = _dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
            command = " ".join([Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python", *sys.argv[1:]])
            f.seek(0)
            f.truncate()
            f.write(f"PID {os.getpid()}, started {started}: {command}\n")
            f.flush()
        self._held[key] = [f, 1]
        self._key = key
        return self

    def release(self) -> None:
        if self._key is None:
            return
        held = self._held[self._key]
        held[1] -= 1
        if held[1] == 0:
            del self._held[self._key]
            if held[0] is not None:
                # Closing unlocks. The file stays: removing it could pull it
                # from under a process that has just opened it to lock it.
                held[0].close()
        self._key = None

    def __enter__(self) -> "FolderLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


def write_frame_csv(frame: Any, path: str | Path) -> None:
    """``frame.to_csv(path, index=False)`` (a pandas DataFrame) through :func:`atomic_open`."""
    with atomic_open(path, "w", newline="") as f:
        frame.to_csv(f, index=False)
