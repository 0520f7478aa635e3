"""A minimal OTLP/HTTP receiver on 127.0.0.1: decodes protobuf export requests with
opentelemetry-proto and keeps the spans and metrics it was sent (tests/observe)."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class Received:
    def __init__(self) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.content_types: set[str] = set()
        self.lock = threading.Lock()

    def spans(self) -> list[tuple[Any, Any]]:
        """(resource, span) pairs of every span received."""
        with self.lock:
            return [
                (rs.resource, span)
                for request in self.traces
                for rs in request.resource_spans
                for ss in rs.scope_spans
                for span in ss.spans
            ]

    def metric_names(self) -> set[str]:
        with self.lock:
            return {
                m.name
                for request in self.metrics
                for rm in request.resource_metrics
                for sm in rm.scope_metrics
                for m in sm.metrics
            }


def _handler(received: Received) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            with received.lock:
                received.content_types.add(self.headers.get("Content-Type", ""))
            reply: Any
            if self.path == "/v1/traces":
                request: Any = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with received.lock:
                    received.traces.append(request)
                reply = ExportTraceServiceResponse()
            elif self.path == "/v1/metrics":
                request = ExportMetricsServiceRequest()
                request.ParseFromString(body)
                with received.lock:
                    received.metrics.append(request)
                reply = ExportMetricsServiceResponse()
            else:
                self.send_error(404)
                return
            data = reply.SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, Received]]:
    """Yield (base URL, what was received); the server stops on exit."""
    received = Received()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(received))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
