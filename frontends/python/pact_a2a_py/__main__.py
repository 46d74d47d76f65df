"""pact_a2a_py is the Python A2A frontend of a PACT Provider: pactd's front
door answers its requests (pacta2a.FrontDoor) and it runs the Brand's agent.

    PACT_FRONTEND_TOKEN=… python3 -m pact_a2a_py -pactd http://127.0.0.1:7070 -listen 127.0.0.1:3000 -demo

(with frontends/python and frontends/pacta2a-py/src on PYTHONPATH). The
settings are in settings.py. It logs JSON lines to stderr, among them
{"msg":"pact-a2a serving","addr":…} once it listens.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sys
from datetime import datetime, timezone

import uvicorn

from .app import build
from .server import HeadBound, PactH11Protocol
from .settings import Settings, SettingsError, parse, split_host_port


class JSONFormatter(logging.Formatter):
    """One JSON object per line, with the fields of Go's slog JSON handler."""

    _LEVELS = {"WARNING": "WARN", "CRITICAL": "ERROR"}

    def format(self, record: logging.LogRecord) -> str:
        out = {
            "time": datetime.fromtimestamp(record.created, tz=timezone.utc).isoformat().replace("+00:00", "Z"),
            "level": self._LEVELS.get(record.levelname, record.levelname),
            "msg": record.getMessage(),
        }
        extra = getattr(record, "pact", None)
        if isinstance(extra, dict):
            out.update(extra)
        if record.exc_info and record.exc_info[1] is not None:
            out["error"] = repr(record.exc_info[1])
            out["stack"] = self.formatException(record.exc_info)
        return json.dumps(out, separators=(",", ":"), ensure_ascii=False, default=str)


def setup_logging() -> logging.Logger:
    """Sends every log record (uvicorn's too) to stderr as JSON."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    # uvicorn warns about each malformed request (a 400 it answers itself): not worth
    # a line each, or a client could flood the log.
    logging.getLogger("uvicorn.error").setLevel(logging.ERROR)
    return logging.getLogger("pact_a2a_py")


def listen(address: str) -> socket.socket:
    """Binds and listens on host:port."""
    host, port = split_host_port(address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


async def serve(s: Settings, log: logging.Logger) -> None:
    """Serves until SIGINT or SIGTERM, then shuts down gracefully."""
    sock = listen(s.listen)
    fe = build(s, log)
    config = uvicorn.Config(
        HeadBound(fe.app),
        http=PactH11Protocol,
        lifespan="on",
        log_config=None,
        access_log=False,
        server_header=False,
        timeout_keep_alive=120,
    )
    server = uvicorn.Server(config)
    host, port = sock.getsockname()[:2]
    addr = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    log.info("pact-a2a serving", extra={"pact": {"addr": addr, "pactd": s.pactd, "transport": s.transport}})
    try:
        await server.serve(sockets=[sock])
    finally:
        await fe.aclose()


def main() -> None:
    """Runs the frontend with the process's flags and environment."""
    log = setup_logging()
    try:
        s = parse(sys.argv[1:], os.environ)
    except SettingsError as err:
        print(f"pact-a2a: {err}", file=sys.stderr)
        sys.exit(1)
    try:
        asyncio.run(serve(s, log))
    except OSError as err:
        print(f"pact-a2a: {err}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
