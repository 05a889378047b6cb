"""Files that other processes write or read at the same time: the run
store, the tables, the manifest of an output folder.

A file is written whole under a temporary name of its own beside it, then
renamed over the final name (atomic on POSIX within one file system): a
reader sees the old file or the new one, never half of one, and two writers
of the same file each rename a complete file of their own, the last one
winning. There is no fsync: after a power cut a file may be empty or torn,
which the run store treats as a run not made yet (it is run again).
"""

from __future__ import annotations

import errno
import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator


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


def write_frame_csv(frame: Any, path: str | Path) -> None:
    """``frame.to_csv(path, index=False)`` (a pandas DataFrame) through :func:`atomic_open`."""
    with atomic_open(path, "w", newline="") as f:
        frame.to_csv(f, index=False)
