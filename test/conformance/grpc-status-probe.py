#!/usr/bin/python3
"""One gRPC call made with grpcio (the C-core client that Python, C++, Ruby and PHP share), printing how it ended.

Run with Debian's /usr/bin/python3 (python3-grpcio). No generated code: the method is called by its path with
identity (bytes) serializers, and the caller passes the request messages as protobuf bytes in hex.

  grpc-status-probe.py --target 127.0.0.1:PORT --method /pkg.Service/Method --kind bidi|unary|server-streaming
                       [--message HEX]... [--metadata KEY=VALUE]... [--wait SECONDS]

--kind bidi: a stream_stream call whose request iterator yields the messages and then does NOT end (no half-close)
until the call has ended, or until --wait seconds have passed (then it ends, and halfClosed says so).
--kind unary / server-streaming: a unary_unary / unary_stream call with the one message (such a request always ends
with its message: halfClosed is true).

Prints one JSON object: {"code": "NOT_FOUND", "details": "...", "halfClosed": false, "responses": 0,
"initialMetadata": {...}, "trailingMetadata": {...}, "kind": "bidi"}. Exit status 0 whatever the gRPC status;
2 for bad arguments.
"""
import argparse
import json
import sys
import threading

try:
    import grpc
except ImportError as err:  # the Node test reports this as a failure with its own message
    print(json.dumps({"error": f"grpc is not importable: {err}"}))
    sys.exit(3)


def metadata_dict(pairs):
    out = {}
    for key, value in pairs or ():
        out[key] = value if isinstance(value, str) else value.hex()
    return out


def run_bidi(channel, args, messages, metadata):
    call_done = threading.Event()
    state = {"halfClosed": False}

    def requests():
        for message in messages:
            yield message
        # Keep the request side open: the status must arrive without the client half-closing.
        if not call_done.wait(args.wait):
            state["halfClosed"] = True

    call = channel.stream_stream(args.method, request_serializer=None, response_deserializer=None)(
        requests(), metadata=metadata, timeout=args.wait * 2 + 5
    )
    call.add_done_callback(lambda _call: call_done.set())
    responses = 0
    try:
        for _ in call:
            responses += 1
    except grpc.RpcError:
        pass
    return call, responses, state["halfClosed"]


def run_server_streaming(channel, args, messages, metadata):
    if len(messages) != 1:
        raise SystemExit("--kind server-streaming needs exactly one --message")
    call = channel.unary_stream(args.method, request_serializer=None, response_deserializer=None)(
        messages[0], metadata=metadata, timeout=args.wait * 2 + 5
    )
    responses = 0
    try:
        for _ in call:
            responses += 1
    except grpc.RpcError:
        pass
    return call, responses, True


def run_unary(channel, args, messages, metadata):
    if len(messages) != 1:
        raise SystemExit("--kind unary needs exactly one --message")
    future = channel.unary_unary(args.method, request_serializer=None, response_deserializer=None).future(
        messages[0], metadata=metadata, timeout=args.wait * 2 + 5
    )
    try:
        future.result()
        responses = 1
    except grpc.RpcError:
        responses = 0
    return future, responses, True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True)
    parser.add_argument("--method", required=True)
    parser.add_argument("--kind", choices=["bidi", "unary", "server-streaming"], required=True)
    parser.add_argument("--message", action="append", default=[])
    parser.add_argument("--metadata", action="append", default=[])
    parser.add_argument("--wait", type=float, default=15.0)
    args = parser.parse_args()
    messages = [bytes.fromhex(m) for m in args.message]
    metadata = [tuple(m.split("=", 1)) for m in args.metadata]
    with grpc.insecure_channel(args.target) as channel:
        run = {"bidi": run_bidi, "unary": run_unary, "server-streaming": run_server_streaming}[args.kind]
        call, responses, half_closed = run(channel, args, messages, metadata)
        print(
            json.dumps(
                {
                    "kind": args.kind,
                    "code": call.code().name,
                    "details": call.details(),
                    "halfClosed": half_closed,
                    "responses": responses,
                    "initialMetadata": metadata_dict(call.initial_metadata()),
                    "trailingMetadata": metadata_dict(call.trailing_metadata()),
                }
            )
        )


if __name__ == "__main__":
    main()
