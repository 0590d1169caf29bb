"""A local stand-in for the Anthropic Messages API, good enough for the real SDK.

`POST /v1/messages` answers with text or `tool_use` blocks and a `usage` computed
from the request it received (about four characters a token; cache reads when a
marked prefix repeats).  Faults are queued on demand: an HTTP status (429 / 500 /
529), a slow answer, or malformed output.

Its "model" knows no answers.  For the investigation it writes code (the
previous script's blocks when the context holds one, else a setup cell and one
check per issue, written from the issue's own fields), and builds its final
answer only from the `record` lines in the tool results it gets back.  It
refuses a conversation in which a tool call has no result, as the API does, and
keeps every tool result for the tests.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

from cataloger_dagster.core.models import IssueModel
from cataloger_dagster.core.investigate.code import (
    check_block, check_type, investigate_block, parse_records, parse_script,
)

ERRORS = {429: "rate_limit_error", 500: "api_error", 529: "overloaded_error", 400: "invalid_request_error"}


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _between(text: str, tag: str) -> Optional[str]:
    m = re.search(f"<{tag}>\n?(.*?)\n?</{tag}>", text, re.DOTALL)
    return m.group(1) if m else None


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


class StandIn:
    def __init__(self) -> None:
        self.requests: list[dict] = []        # bodies received, in order
        self.usages: list[tuple[str, dict]] = []  # (stage, usage) of each answered request
        self.tool_results: dict[str, str] = {}  # tool_use_id -> content received back
        self.auth_headers: set[str] = set()
        self.faults: list[dict] = []          # {"status"|"delay"|"malformed", "stage": optional}
        self.probe: Optional[str] = None      # code to run as the first tool call of each investigation
        self._cache: set[str] = set()
        self._ids = 0
        self._lock = threading.Lock()
        self._server: Optional[ThreadingHTTPServer] = None

    # ---------------------------------------------------------------- server
    def __enter__(self) -> "StandIn":
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                standin.auth_headers.add(self.headers.get("authorization") or self.headers.get("x-api-key") or "")
                if self.path.split("?")[0] != "/v1/messages":
                    return self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
                status, payload = standin.handle(body)
                self._send(status, payload)

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.send_header("request-id", f"req_{len(standin.requests)}")
                    if status in (429, 529, 500):
                        self.send_header("retry-after-ms", "20")  # keeps the SDK's backoff short
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # ---------------------------------------------------------------- protocol
    def handle(self, body: dict) -> tuple[int, dict]:
        with self._lock:
            self.requests.append(body)
            stage = self.stage(body)
            fault = next((f for f in self.faults if f.get("stage") in (None, stage)), None)
            if fault is not None:
                self.faults.remove(fault)
        if fault and "status" in fault:
            code = fault["status"]
            return code, {"type": "error", "error": {"type": ERRORS.get(code, "api_error"), "message": "stand-in fault"}}
        if fault and "delay" in fault:
            time.sleep(fault["delay"])
        problem = self.unanswered_tool_calls(body)
        if problem:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": problem}}
        if fault and fault.get("malformed"):
            content = [{"type": "text", "text": '{"summary": "I think the table is fine"'}]
        elif stage == "understanding":
            content = [{"type": "text", "text": json.dumps(self.understanding(body))}]
        elif stage == "issues":
            content = [{"type": "text", "text": json.dumps(self.issues(body))}]
        elif stage == "investigation":
            content = self.investigation(body)
        elif stage == "followups":
            content = [{"type": "text", "text": json.dumps(self.followups(body))}]
        else:
            content = [{"type": "text", "text": "{}"}]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        usage = self.usage(body, content)
        with self._lock:
            self.usages.append((stage, usage))
            self._ids += 1
            n = self._ids
        return 200, {"id": f"msg_standin_{n}", "type": "message", "role": "assistant", "model": body.get("model"),
                     "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}

    @staticmethod
    def stage(body: dict) -> str:
        m = re.search(r"TASK: (\w+)", _text_of(body.get("system") or []))
        return m.group(1) if m else "unknown"

    def unanswered_tool_calls(self, body: dict) -> Optional[str]:
        messages = body.get("messages") or []
        for i, msg in enumerate(messages):
            if msg["role"] != "assistant" or isinstance(msg["content"], str):
                continue
            wanted = {b["id"] for b in msg["content"] if b.get("type") == "tool_use"}
            following = messages[i + 1]["content"] if i + 1 < len(messages) else []
            given = {b["tool_use_id"]: b for b in following if isinstance(b, dict) and b.get("type") == "tool_result"}
            if wanted - set(given):
                return f"tool_use ids {sorted(wanted - set(given))} have no tool_result right after them"
            for tid, block in given.items():
                content = block.get("content")
                self.tool_results[tid] = content if isinstance(content, str) else _text_of(content)
        return None

    def usage(self, body: dict, content: list[dict]) -> dict:
        """Tokens of what was actually sent, with the cache as the API keeps it (per model, per prefix)."""
        parts: list[tuple[str, bool]] = []
        for tool in body.get("tools") or []:
            parts.append((json.dumps({k: v for k, v in tool.items() if k != "cache_control"}, sort_keys=True),
                          "cache_control" in tool))
        system = body.get("system") or []
        for block in ([{"type": "text", "text": system}] if isinstance(system, str) else system):
            parts.append((json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True),
                          "cache_control" in block))
        for msg in body.get("messages") or []:
            blocks = [{"type": "text", "text": msg["content"]}] if isinstance(msg["content"], str) else msg["content"]
            for block in blocks:
                parts.append((msg["role"] + json.dumps({k: v for k, v in block.items() if k != "cache_control"},
                                                       sort_keys=True), "cache_control" in block))
        if body.get("cache_control") and parts:
            parts[-1] = (parts[-1][0], True)
        digest = hashlib.sha256(str(body.get("model")).encode())
        total, boundaries, breakpoints = 0, [], []
        for text, marked in parts:
            digest.update(text.encode())
            total += tokens(text)
            boundaries.append((digest.copy().hexdigest(), total))
            if marked:
                breakpoints.append(len(boundaries) - 1)
        with self._lock:
            # as the API does, a breakpoint also hits an entry written at an earlier block boundary
            # (within 20 blocks), so a conversation's mark can move forward turn after turn
            read = 0
            for b in breakpoints:
                for h, n in reversed(boundaries[max(0, b - 20): b + 1]):
                    if h in self._cache:
                        read = max(read, n)
                        break
            self._cache.update(boundaries[b][0] for b in breakpoints)
        written = boundaries[breakpoints[-1]][1] if breakpoints else 0
        creation = max(0, written - read)
        return {"input_tokens": total - read - creation, "output_tokens": tokens(json.dumps(content)),
                "cache_read_input_tokens": read, "cache_creation_input_tokens": creation}

    # ---------------------------------------------------------------- the "model"
    def understanding(self, body: dict) -> dict:
        ctx = json.loads(_between(_text_of(body["system"]), "table_context"))
        kinds = {"integer": "numeric", "decimal": "numeric", "float": "numeric", "boolean": "boolean",
                 "date": "date", "timestamp": "date"}
        columns = []
        for col in ctx["columns"]:
            kind = kinds.get(col["kind"], "string")
            if kind == "string" and col.get("distinct") and col["distinct"] <= 12:
                kind = "categorical"
            samples = [row.get(col["name"]) for row in ctx["sample_rows"][:3]]
            columns.append({"name": col["name"], "dataType": kind,
                            "description": f"The {col['name'].replace('_', ' ')} of each {ctx['table']} record.",
                            "sampleValues": [v if isinstance(v, (str, int, float, bool)) or v is None else str(v)
                                             for v in samples]})
        gappy = [c["name"] for c in ctx["columns"] if c.get("nulls")]
        return {
            "summary": {"name": ctx["table"], "description": f"{ctx['table']}: {ctx['row_count']} records.",
                        "rowCount": ctx["row_count"], "columnCount": ctx["column_count"],
                        "observations": [f"Columns with gaps: {', '.join(gappy) or 'none'}."]},
            "columns": columns,
            "suggested_context": f"The {ctx['table']} table, described by the stand-in model.",
        }

    def issues(self, body: dict) -> dict:
        text = _text_of(body["messages"][0]["content"])
        detected = json.loads(_between(text, "detected_issues"))
        keep = ("id", "type", "severity", "description", "affectedColumns", "suggestedAction", "category",
                "affectedRows", "temporalPattern")
        return {"issues": [{k: i.get(k) for k in keep} for i in detected],
                "summary": f"Reviewed {len(detected)} detected issues.",
                "completedAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}

    def followups(self, body: dict) -> dict:
        """A question in its own words per issue, with the first and the last choice offered (the
        last is "keep as is" for every type), and one action it was never offered, which the
        agent must drop."""
        asked = json.loads(_between(_text_of(body["messages"][0]["content"]), "smart_fix_issues"))
        return {"followups": [
            {"issue_id": i["issue_id"], "prompt": f"Stand-in: what should happen to the {i['type']} of "
                                                  f"{', '.join(i['affectedColumns'])}?",
             "examples": i.get("examples"),
             "options": [{"action": c["action"], "label": f"Stand-in: {c['does']}"}
                         for c in (i["choices"][0], i["choices"][-1])]
                        + [{"action": "drop_table", "label": "Drop the table"}]}
            for i in asked]}

    def investigation(self, body: dict) -> list[dict]:
        messages = body["messages"]
        first = _text_of(messages[0]["content"])
        context = json.loads(_between(first, "context"))
        issues = [IssueModel.model_validate({"description": "", "suggestedAction": "", "category": "quick_fixes", **i})
                  for i in json.loads(_between(first, "issues"))]
        setup = _between(first, "setup")
        ran: list[tuple[str, str]] = []   # (tool_use_id, code) of earlier calls
        for msg in messages:
            if msg["role"] == "assistant":
                ran += [(b["id"], b["input"]["code"]) for b in msg["content"] if b.get("type") == "tool_use"]
        answered: dict[str, tuple[dict, str]] = {}
        for tid, _ in ran:
            result = json.loads(self.tool_results.get(tid) or "{}")
            for issue_id, rec in parse_records(result.get("stdout") or "").items():
                if rec.get("verdict") in ("confirmed", "refuted", "inconclusive"):
                    answered[issue_id] = (rec, tid)
        # the ids as the code names them: a marker shows an odd id only sanitised
        attempted = {issue_id for _, code in ran for issue_id in parse_script(code).investigations}
        todo = [i for i in issues if i.id not in answered and i.id not in attempted]
        may_call = (body.get("tool_choice") or {}).get("type") != "none"
        code = None
        previous = (context.get("previous_script") or {}).get("code")
        parsed = parse_script(previous) if previous else None
        if not may_call or not todo:
            code = None
        elif self.probe and not ran:
            code = self.probe
        elif not any("# block: setup" in c for _, c in ran):
            if parsed and parsed.setup:   # reuse what worked: the earlier blocks, in one call
                kept = [i for i in todo if i.id in parsed.investigations]
                code = "\n".join([parsed.setup, *parsed.checks.values(),
                                  *(parsed.investigations[i.id] for i in kept)])
            else:
                code = setup + "\nprint(t.schema())\n"
        elif parsed and parsed.setup:     # warm: what the earlier script did not answer, in one batch
            defined = "\n".join(c for _, c in ran)
            kinds = sorted({check_type(i) for i in todo if f"# block: check {check_type(i)}" not in defined})
            code = "\n".join([check_block(k) for k in kinds] + [investigate_block(i, issues) for i in todo])
        else:                             # cold: one issue at a time
            issue = todo[0]
            defined = "\n".join(c for _, c in ran)
            kind = check_type(issue)
            code = ("" if f"# block: check {kind}" in defined else check_block(kind)) + investigate_block(issue, issues)
        if code is not None:
            with self._lock:
                self._ids += 1
                tid = f"toolu_standin_{self._ids:05d}"
            return [{"type": "tool_use", "id": tid, "name": "execute_python", "input": {"code": code}}]
        final = [{"issue_id": issue_id, "verdict": rec["verdict"], "evidence": json.dumps(rec.get("evidence") or {}),
                  "cells": [tid]} for issue_id, (rec, tid) in answered.items()]
        return [{"type": "text", "text": json.dumps({"investigations": final})}]

    # ---------------------------------------------------------------- for tests
    def input_tokens(self, stage: Optional[str] = None) -> int:
        """Everything sent in answered requests, as tokens (uncached + cache reads + cache writes)."""
        return sum(u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
                   for s, u in self.usages if stage is None or s == stage)

    def tool_calls(self) -> int:
        """execute_python calls whose result came back."""
        return len(self.tool_results)
