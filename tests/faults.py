"""Fault injection shared by the file-format and stream tests."""

import errno
import io
import os


class DiskFullAfter:
    """Wraps a file object; raises OSError(ENOSPC) once `limit` bytes have been written."""

    def __init__(self, inner, limit):
        self.inner, self.limit, self.written = inner, limit, 0

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
