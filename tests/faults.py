"""Fault injection shared by the file-format and stream tests."""

import errno
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
