"""Fault injection shared by the file-format and stream tests."""

import contextlib
import errno
import io
import os
import stat
import threading


class DiskFullAfter:
    """Wraps a file object; raises OSError(ENOSPC) once `limit` bytes have been written."""

    def __init__(self, inner, limit):
        self.inner, self.limit, self.written = inner, limit, 0

    def seekable(self):
        # Not by offset: the file format's positional pipeline (format.hpp seal_file) would write
        # around this wrapper through the descriptor; what this injects is the streaming path's
        # full disk (tests/test_file_pipeline.py fills a real tmpfs for the other).
        return False

    def write(self, data):
        if self.written + len(data) > self.limit:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.written += len(data)
        return self.inner.write(data)

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.inner.close()


class ShortWriter(io.RawIOBase):
    """An unbuffered writer over a real file that takes at most `max_len` bytes per write() and
    returns the count, as raw files, pipes and sockets may; a caller that ignores the count
    loses the rest."""

    def __init__(self, path, max_len):
        self.file = open(path, "wb", buffering=0)
        self.max_len = max_len
        self.num_calls = 0

    def writable(self):
        return True

    def write(self, data):
        self.num_calls += 1
        return self.file.write(memoryview(data)[:self.max_len])

    def close(self):
        self.file.close()
        super().close()


class FifoReader:
    """Reads everything written into a FIFO on a thread (`received` once the writer closed).
    On exit it unblocks a reader still waiting for a writer that never came (a broken
    implementation replaced the FIFO instead of writing into it), so a failing test ends."""

    def __init__(self, path):
        self.path, self.received = path, None
        self.thread = threading.Thread(target=self._read, daemon=True)

    def _read(self):
        with open(self.path, "rb") as fifo:
            self.received = fifo.read()

    def __enter__(self):
        self.thread.start()
        return self

    def wait(self, timeout=30):
        self.thread.join(timeout)
        return self.received

    def __exit__(self, *exc_info):
        if self.thread.is_alive():
            with contextlib.suppress(OSError):
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            self.thread.join(5)


def null_device(directory):
    """A character device to write output into: as root, a new node of /dev/null's device in
    `directory` (a broken implementation run as root would replace the system's /dev/null with
    a regular file, as issue 9 reproduced); otherwise /dev/null itself, which an unprivileged
    process cannot replace. None when neither is usable (a nodev mount)."""
    if os.geteuid() != 0:
        return "/dev/null"
    node = os.path.join(directory, "null-device")
    real = os.stat("/dev/null")
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, real.st_rdev)
        with open(node, "wb") as probe:
            probe.write(b"probe")
    except OSError:
        return None
    return node
