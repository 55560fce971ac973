"""What a remote model can do wrong, as exceptions.

All are :class:`RemoteError` (a :class:`leapgram.LeapgramError`). Each carries ``partial``: the
:class:`~leapgram.remote.result.RemoteResult` so far when the failure came mid-request (its text is
the grammar-valid prefix the model had written, completed by the grammar), else ``None``.
"""

from __future__ import annotations

from ..errors import LeapgramError


class RemoteError(LeapgramError):
    """A remote model that failed, timed out or answered something that is not an OpenAI-style reply."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.partial = None


class RemoteHTTPError(RemoteError):
    """The server refused the request or could not be reached; ``status`` is the HTTP status
    (``None`` when no connection was made) and ``body`` the start of the server's answer."""

    def __init__(self, message: str, *, status: int | None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class RemoteTimeoutError(RemoteError):
    """One call took longer than ``call_timeout`` (the overall deadline is a budget instead: it
    finishes the output with the grammar)."""


class RemoteProtocolError(RemoteError):
    """The answer was not what an OpenAI-compatible server sends (not HTTP, not JSON, no choices),
    or streams kept breaking off."""
