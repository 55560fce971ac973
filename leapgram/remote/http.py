"""A small HTTP/1.1 client over asyncio streams (standard library only), made for one thing:
POST a JSON body and read the answer, whole or as server-sent events, closing the connection
the moment the caller stops reading.

One connection per request (``Connection: close``): a request that is cut short never leaves a
half-read connection in a pool, and an OpenAI-compatible server stops generating when its client
goes away. Every wait is bounded by the caller's ``asyncio.timeout``.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from .errors import RemoteHTTPError, RemoteProtocolError

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class BaseURL:
    """``scheme://host:port/path`` split once; ``path`` has no trailing slash."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def parse(cls, url: str) -> BaseURL:
        parts = urlsplit(str(url).strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base URL must look like http://host:port/v1, not {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"


class Response:
    """An open response: status, headers, and the body read incrementally."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, status: int,
                 headers: dict[str, str], url: str) -> None:
        self._reader = reader
        self._writer = writer
        self.status = status
        self.headers = headers
        self.url = url
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length")
        self._remaining = int(length) if length and length.isdigit() and not self._chunked else None
        self.complete = False  # the body ended as the framing says (not by a dropped connection)

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive; ``complete`` tells whether it ended properly."""
        if self._chunked:
            async for data in self._chunked_body():
                yield data
        elif self._remaining is not None:
            while self._remaining > 0:
                data = await self._reader.read(min(self._remaining, 65536))
                if not data:
                    return
                self._remaining -= len(data)
                yield data
            self.complete = True
        else:
            while data := await self._reader.read(65536):
                yield data
            self.complete = True

    async def _chunked_body(self) -> AsyncIterator[bytes]:
        while True:
            line = await self._reader.readline()
            if not line:
                return
            try:
                size = int(line.split(b";")[0].strip() or b"x", 16)
            except ValueError:
                raise RemoteProtocolError(f"{self.url}: bad chunk header {line[:40]!r}") from None
            if size == 0:
                self.complete = True
                return
            try:
                data = await self._reader.readexactly(size + 2)
            except asyncio.IncompleteReadError as exc:
                if exc.partial:
                    yield exc.partial[:size]
                return
            yield data[:size]

    async def read(self) -> bytes:
        """The whole body (at most ``MAX_BODY_BYTES``)."""
        parts, total = [], 0
        async for data in self.chunks():
            parts.append(data)
            total += len(data)
            if total > MAX_BODY_BYTES:
                raise RemoteProtocolError(f"{self.url}: response body over {MAX_BODY_BYTES} bytes")
        return b"".join(parts)

    async def events(self) -> AsyncIterator[bytes]:
        """Server-sent events: the ``data`` field of each event (lines joined by ``\\n``)."""
        buffer = b""
        async for data in self.chunks():
            buffer += data.replace(b"\r\n", b"\n")
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                payload = _event_data(event)
                if payload is not None:
                    yield payload
        if buffer.strip():
            payload = _event_data(buffer)
            if payload is not None and self.complete:
                yield payload

    def close(self) -> None:
        """Drop the connection (the server sees its client gone and stops generating)."""
        transport = self._writer.transport
        if not transport.is_closing():
            transport.abort()


def _event_data(event: bytes) -> bytes | None:
    lines = [line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
    return b"\n".join(lines) if lines else None


async def post(url: BaseURL, path: str, body: dict | None, headers: dict[str, str], *,
               method: str = "POST") -> Response:
    """Send ``body`` as JSON to ``url.path + path``; the response is open (call ``close``)."""
    payload = b"" if body is None else json.dumps(body, ensure_ascii=False).encode()
    context = ssl.create_default_context() if url.scheme == "https" else None
    try:
        reader, writer = await asyncio.open_connection(url.host, url.port, ssl=context, limit=MAX_HEADER_BYTES)
    except OSError as exc:
        raise RemoteHTTPError(f"cannot connect to {url}: {exc.strerror or exc}", status=None) from exc
    target = f"{url.path}{path}"
    lines = [f"{method} {target} HTTP/1.1", f"Host: {url.host}:{url.port}", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", f"Content-Length: {len(payload)}",
             "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
        await writer.drain()
        status, response_headers = await _read_head(reader, f"{url}{path}")
    except BaseException:
        writer.transport.abort()
        raise
    return Response(reader, writer, status, response_headers, f"{url}{path}")


async def _read_head(reader: asyncio.StreamReader, where: str) -> tuple[int, dict[str, str]]:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        raise RemoteProtocolError(f"{where}: the server closed the connection before answering "
                                  f"({len(exc.partial)} bytes)") from None
    except asyncio.LimitOverrunError:
        raise RemoteProtocolError(f"{where}: response headers over {MAX_HEADER_BYTES} bytes") from None
    except ConnectionError as exc:
        raise RemoteProtocolError(f"{where}: connection lost before the answer: {exc}") from None
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise RemoteProtocolError(f"{where}: not an HTTP response: {status_line[:60]!r}")
    headers = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers
