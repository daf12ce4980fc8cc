#!/usr/bin/env python3
"""A tiny OpenAI-compatible chat model for the LiteLLM checks (standard library only).

POST /v1/chat/completions answers from the last user message:
  contains "card"        -> an answer that carries a (test) card number in clear
  contains "transfer"    -> a tool call transfer_money(...)   (the gate should refuse it)
  contains "balance"     -> a tool call get_balance(...)      (the gate should allow it)
  anything else          -> "MOCK-ANSWER: ..." (echoes the question's length, not its text)
  a tool result last     -> "MOCK-ANSWER: done." (an agent's loop ends after its tool ran)
"stream": true is answered as server-sent events, one word per chunk.

Every request body is appended to --log (one JSON object per line) so a test can
tell whether a request reached the model at all. The server binds --port (0 = any
free port) and writes the port it got to --port-file once it is listening.
"""

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CARD = "4111 1111 1111 1111"
LOCK = threading.Lock()


def last_user_text(messages):
    for message in reversed(messages or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def answer_for(question):
    q = question.lower()
    if "card" in q:
        return {"content": f"Your card on file is {CARD}, expiring 12/29.", "tool_calls": None}
    if "transfer" in q:
        return {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_transfer_1",
                    "type": "function",
                    "function": {
                        "name": "transfer_money",
                        "arguments": json.dumps({"to_account": "999-000-111", "amount": 50000, "currency": "BDT"}),
                    },
                }
            ],
        }
    if "balance" in q:
        return {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_balance_1",
                    "type": "function",
                    "function": {"name": "get_balance", "arguments": json.dumps({"wallet": "01711000000"})},
                }
            ],
        }
    return {"content": f"MOCK-ANSWER: I read a question of {len(question)} characters.", "tool_calls": None}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_path = None

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    def _json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            return self._json(200, {"object": "list", "data": [{"id": "mock-bank", "object": "model", "owned_by": "rig"}]})
        return self._json(404, {"error": {"message": "not found"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._json(400, {"error": {"message": "bad json"}})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._json(404, {"error": {"message": "not found"}})
        with LOCK, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": self.path, "body": body}) + "\n")
        messages = body.get("messages") or []
        question = last_user_text(messages)
        if messages and messages[-1].get("role") == "tool":
            answer = {"content": "MOCK-ANSWER: done.", "tool_calls": None}
        else:
            answer = answer_for(question)
        model = body.get("model", "mock-bank")
        created = int(time.time())
        if body.get("stream"):
            return self._stream(model, created, answer)
        message = {"role": "assistant", "content": answer["content"]}
        if answer["tool_calls"]:
            message["tool_calls"] = answer["tool_calls"]
        return self._json(
            200,
            {
                "id": "chatcmpl-mock",
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if answer["tool_calls"] else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            },
        )

    def _stream(self, model, created, answer):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def chunk(delta, finish=None):
            obj = {
                "id": "chatcmpl-mock",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
            self.wfile.flush()

        chunk({"role": "assistant", "content": ""})
        if answer["tool_calls"]:
            for i, call in enumerate(answer["tool_calls"]):
                chunk({"tool_calls": [{"index": i, **call}]})
            chunk({}, "tool_calls")
        else:
            words = answer["content"].split(" ")
            for i, word in enumerate(words):
                chunk({"content": word + ("" if i == len(words) - 1 else " ")})
            chunk({}, "stop")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that hangs up first (an agent that has what it needs) is not an error here.
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    Handler.log_path = args.log
    server = Server(("127.0.0.1", args.port), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os

    os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
