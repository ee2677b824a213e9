#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 forwarding proxy for the S3 tests (stdlib only).

    faultproxy.py --upstream 127.0.0.1:PORT [--listen 127.0.0.1] [--port 0]
                  [--port-file FILE] [--rules FILE] [--log FILE]
                  [--rule 'RULE'] ... [--seed N] [--tag ANY]

Listens on 127.0.0.1 (port 0: the kernel picks one; written to --port-file
once listening, and printed on stdout) and forwards every request to the
upstream unchanged (request line, headers and body bytes as received, so
SigV4 signatures and payload hashes stay valid), over one upstream
connection per client connection, keep-alive on both sides, one thread per
client connection.  Bodies are streamed (Content-Length or chunked);
"Expect: 100-continue" is passed through.

Faults come from rules, one per line of the --rules file (re-read whenever
the file changes: replace it with `mv` for an atomic switch; a change also
resets every rule's counters) or from --rule arguments (used while the file
is empty or absent).  A rule is space-separated key=value words:

  action=error      answer without forwarding: status=503 (default) with an
                    S3 XML error body, code=SlowDown (503/429) or
                    InternalError (500) unless code= is given
  action=reset-before  read the request, do not forward it, reset the
                    connection (TCP RST)
  action=reset-after   forward the request and read the whole reply (the
                    request took effect), then reset the client connection
  action=delay      ms=D: wait D ms before forwarding (cumulative: does not
                    stop the other rules from applying)
  action=truncate   forward, send the reply head and only bytes=K bytes of
                    the body (default half of it), then close the connection
  action=duplicate  forward the request twice (the body is buffered); the
                    client gets the second reply (reply=first for the first)

Which requests a rule applies to (all given conditions must hold; the count
n is over the requests matching method= and path= since the rules were
loaded):
  method=REGEX  path=REGEX   re.search on the method / the request target
                             (path and query as sent; no spaces in regexes)
  nth=N          only the N-th matching request
  every=N        every N-th (N, 2N, ...)
  from=N         the N-th and every later one
  prob=P         with probability P, from a generator seeded with seed=S
                 (a line "seed=S" in the file, or --seed; default 0) and
                 the rule's index, so a run is reproducible
  times=K        at most K times
Example: "action=error status=503 method=PUT path=^/pqvtest/ nth=2".

The log (--log, flushed per line, written before the reply is sent, so a
client that has its reply finds the line) has one line per request:
  SEQ METHOD TARGET STATUS FAULT
STATUS is what the client got ("-" if none: reset, truncated head), FAULT
the faults applied ("-" for none; e.g. "error", "delay:10", "reset-before",
"reset-after:200", "truncate:0/1048576", "duplicate:first=200",
"upstream-down").  Lines starting with "#" are notes (rules loaded or bad).
"""

import argparse
import os
import random
import re
import select
import socket
import struct
import sys
import threading
import time

MAX_LINE = 65536
CHUNK = 65536


class Closed(Exception):
    """The peer closed the connection (or it broke)."""


class Conn:
    """A socket with buffered reads."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _fill(self):
        try:
            data = self.sock.recv(CHUNK)
        except OSError as e:
            raise Closed(str(e))
        if not data:
            raise Closed("eof")
        self.buf += data

    def readline(self):
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line, self.buf = self.buf[: i + 1], self.buf[i + 1:]
                return line
            if len(self.buf) > MAX_LINE:
                raise Closed("line too long")
            self._fill()

    def read_some(self, n):
        if not self.buf:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise Closed(str(e))

    def stale(self):
        """True if an idle connection has been closed (or sent garbage)."""
        if self.buf:
            return True
        try:
            r, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(r)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def reset(self):
        """Close with a TCP RST."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close()


class Message:
    """A request or response head: raw bytes plus parsed fields."""

    def __init__(self, first, lines):
        self.first = first
        self.raw = first + b"".join(lines) + b"\r\n"
        self.headers = {}
        for ln in lines:
            k, _, v = ln.decode("latin-1").partition(":")
            self.headers.setdefault(k.strip().lower(), []).append(v.strip())

    def get(self, name):
        v = self.headers.get(name)
        return ", ".join(v) if v else None

    def framing(self):
        """('chunked', None), ('length', n) or ('none', 0)."""
        te = self.get("transfer-encoding")
        if te and "chunked" in te.lower():
            return ("chunked", None)
        cl = self.get("content-length")
        if cl is not None:
            return ("length", int(cl.split(",")[0]))
        return ("none", 0)

    def tokens(self, name):
        v = self.get(name) or ""
        return {t.strip().lower() for t in v.split(",") if t.strip()}


def read_head(conn):
    first = conn.readline()
    while first in (b"\r\n", b"\n"):
        first = conn.readline()
    lines = []
    while True:
        ln = conn.readline()
        if ln in (b"\r\n", b"\n"):
            break
        lines.append(ln)
        if len(lines) > 200:
            raise Closed("too many header lines")
    return Message(first, lines)


def relay_body(src, framing, out, limit=None):
    """Copy a body of the given framing from src, calling out(bytes) for
    each piece (raw bytes, chunk framing included).  With limit, stop after
    that many bytes and return False.  Returns True when the body is done."""
    kind, n = framing
    sent = [0]

    def emit(data):
        if limit is not None and sent[0] + len(data) > limit:
            data = data[: limit - sent[0]]
            if data:
                out(data)
            sent[0] = limit
            return False
        out(data)
        sent[0] += len(data)
        return True

    if kind == "length":
        left = n
        while left > 0:
            data = src.read_some(min(left, CHUNK))
            left -= len(data)
            if not emit(data):
                return False
        return True
    if kind == "chunked":
        while True:
            line = src.readline()
            if not emit(line):
                return False
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while True:  # trailers up to the empty line
                    t = src.readline()
                    if not emit(t):
                        return False
                    if t in (b"\r\n", b"\n"):
                        return True
            left = size + 2  # data and its CRLF
            while left > 0:
                data = src.read_some(min(left, CHUNK))
                left -= len(data)
                if not emit(data):
                    return False
    if kind == "eof":
        while True:
            try:
                data = src.read_some(CHUNK)
            except Closed:
                return True
            if not emit(data):
                return False
    return True


def body_length(framing):
    return framing[1] if framing[0] == "length" else None


def response_framing(req_method, resp):
    code = status_of(resp)
    if req_method == "HEAD" or 100 <= code < 200 or code in (204, 304):
        return ("none", 0)
    f = resp.framing()
    if f[0] == "none":
        return ("eof", None)
    return f


def status_of(msg):
    try:
        return int(msg.first.split()[1])
    except (IndexError, ValueError):
        return 0


ERROR_CODES = {500: "InternalError", 503: "SlowDown", 429: "SlowDown"}
ERROR_TEXT = {500: "Internal Server Error", 503: "Service Unavailable", 429: "Too Many Requests"}


class Rule:
    KEYS = {"action", "status", "code", "ms", "bytes", "reply", "method", "path",
            "nth", "every", "from", "prob", "times"}
    ACTIONS = {"error", "reset-before", "reset-after", "delay", "truncate", "duplicate"}

    def __init__(self, text, index, seed):
        self.text = text
        kv = {}
        for word in text.split():
            k, eq, v = word.partition("=")
            if not eq or k not in self.KEYS:
                raise ValueError("bad word %r" % word)
            kv[k] = v
        self.action = kv.get("action")
        if self.action not in self.ACTIONS:
            raise ValueError("action must be one of %s" % ", ".join(sorted(self.ACTIONS)))
        self.status = int(kv.get("status", 503))
        self.code = kv.get("code", ERROR_CODES.get(self.status, "InternalError"))
        self.ms = int(kv.get("ms", 0))
        self.nbytes = int(kv["bytes"]) if "bytes" in kv else None
        self.reply = kv.get("reply", "second")
        self.method = re.compile(kv["method"]) if "method" in kv else None
        self.path = re.compile(kv["path"]) if "path" in kv else None
        self.nth = int(kv["nth"]) if "nth" in kv else None
        self.every = int(kv["every"]) if "every" in kv else None
        self.start = int(kv["from"]) if "from" in kv else None
        self.prob = float(kv["prob"]) if "prob" in kv else None
        self.times = int(kv["times"]) if "times" in kv else None
        self.rng = random.Random("%s:%d" % (seed, index))
        self.count = 0
        self.fired = 0

    def applies(self, method, target):
        if self.method and not self.method.search(method):
            return False
        if self.path and not self.path.search(target):
            return False
        self.count += 1
        n = self.count
        if self.nth is not None and n != self.nth:
            return False
        if self.every is not None and n % self.every != 0:
            return False
        if self.start is not None and n < self.start:
            return False
        if self.prob is not None and not self.rng.random() < self.prob:
            return False
        if self.times is not None and self.fired >= self.times:
            return False
        self.fired += 1
        return True


class Rules:
    def __init__(self, path, cli_rules, seed, log):
        self.path = path
        self.cli_rules = cli_rules
        self.seed = seed
        self.log = log
        self.lock = threading.Lock()
        self.sig = None
        self.rules = self.parse("\n".join(cli_rules), "--rule")

    def parse(self, text, origin):
        seed = self.seed
        lines = []
        for ln in text.splitlines():
            ln = ln.strip()
            if not ln or ln.startswith("#"):
                continue
            if ln.startswith("seed="):
                seed = ln[5:]
                continue
            lines.append(ln)
        try:
            rules = [Rule(ln, i, seed) for i, ln in enumerate(lines)]
        except (ValueError, re.error) as e:
            self.log.note("bad rules from %s: %s" % (origin, e))
            return []
        self.log.note("rules from %s: %s" % (origin, " | ".join(r.text for r in rules) or "none"))
        return rules

    def refresh(self):
        if not self.path:
            return
        try:
            st = os.stat(self.path)
            sig = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            sig = None
        if sig == self.sig:
            return
        self.sig = sig
        text = ""
        if sig is not None:
            try:
                with open(self.path) as f:
                    text = f.read()
            except OSError:
                text = ""
        if text.strip():
            self.rules = self.parse(text, self.path)
        else:
            self.rules = self.parse("\n".join(self.cli_rules), "--rule")

    def select(self, method, target):
        """The delay in ms and the one other fault rule applying (or None)."""
        with self.lock:
            self.refresh()
            delay = 0
            chosen = None
            for r in self.rules:
                if r.applies(method, target):
                    if r.action == "delay":
                        delay += r.ms
                    elif chosen is None:
                        chosen = r
            return delay, chosen


class Log:
    def __init__(self, path):
        self.lock = threading.Lock()
        self.f = open(path, "a") if path else None
        self.seq = 0

    def next_seq(self):
        with self.lock:
            self.seq += 1
            return self.seq

    def write(self, line):
        if self.f:
            with self.lock:
                self.f.write(line + "\n")
                self.f.flush()

    def entry(self, seq, method, target, status, faults):
        self.write("%d %s %s %s %s" % (seq, method, target, status if status else "-",
                                       ",".join(faults) or "-"))

    def note(self, text):
        self.write("# " + text)


class Handler(threading.Thread):
    def __init__(self, client_sock, proxy):
        super().__init__(daemon=True)
        self.client = Conn(client_sock)
        self.proxy = proxy
        self.up = None

    # -- upstream connection ---------------------------------------------
    def connect(self):
        if self.up is not None:
            if not self.up.stale():
                return True
            self.up.close()
            self.up = None
        try:
            s = socket.create_connection(self.proxy.upstream, timeout=30)
        except OSError:
            return False
        s.settimeout(None)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.up = Conn(s)
        return True

    def drop_up(self):
        if self.up is not None:
            self.up.close()
            self.up = None

    # -- the loop ----------------------------------------------------------
    def run(self):
        try:
            while self.one_request():
                pass
        except Closed:
            pass
        except Exception as e:  # a bug in the proxy: make it visible
            self.proxy.log.note("proxy error: %r" % (e,))
        finally:
            self.client.close()
            self.drop_up()

    def one_request(self):
        """Handle one request; False when the client connection is done."""
        try:
            req = read_head(self.client)
        except Closed:
            return False
        parts = req.first.decode("latin-1").split()
        if len(parts) != 3:
            self.proxy.log.note("bad request line %r" % req.first[:200])
            return False
        method, target, version = parts
        seq = self.proxy.log.next_seq()
        rframing = req.framing()
        has_body = rframing != ("length", 0) and rframing[0] != "none"
        expect = has_body and "100-continue" in req.tokens("expect")
        keep = self.client_keepalive(req, version)
        delay, rule = self.proxy.rules.select(method, target)
        faults = []
        if delay:
            faults.append("delay:%d" % delay)
            time.sleep(delay / 1000.0)
        log = self.proxy.log

        if rule is not None and rule.action == "error":
            faults.append("error")
            if expect:
                keep = False  # body not sent (we never said 100): close after
            else:
                relay_body(self.client, rframing, lambda d: None)
            log.entry(seq, method, target, rule.status, faults)
            self.send_error(rule, method, target, seq, keep)
            return keep

        if rule is not None and rule.action == "reset-before":
            faults.append("reset-before")
            if not expect:
                relay_body(self.client, rframing, lambda d: None)
            log.entry(seq, method, target, None, faults)
            self.client.reset()
            return False

        if rule is not None and rule.action == "duplicate":
            return self.duplicate(req, method, target, seq, rframing, expect, keep, rule, faults)

        # Forward (plain, reset-after, truncate).
        if not self.connect():
            faults.append("upstream-down")
            log.entry(seq, method, target, None, faults)
            self.client.reset()
            return False
        try:
            resp = self.forward_streaming(req, rframing, expect)
        except Closed:
            faults.append("upstream-down")
            log.entry(seq, method, target, None, faults)
            self.drop_up()
            self.client.reset()
            return False
        if resp is None:  # the client went away while we relayed
            faults.append("client-gone")
            log.entry(seq, method, target, None, faults)
            return False
        status = status_of(resp)
        fr = response_framing(method, resp)
        up_keep = self.upstream_keepalive(resp, fr)
        if resp.expect_refused:  # answered without the body: close both
            keep = up_keep = False

        if rule is not None and rule.action == "reset-after":
            faults.append("reset-after:%d" % status)
            try:
                relay_body(self.up, fr, lambda d: None)
            except Closed:
                up_keep = False
            log.entry(seq, method, target, None, faults)
            if not up_keep:
                self.drop_up()
            self.client.reset()
            return False

        if rule is not None and rule.action == "truncate":
            total = body_length(fr)
            limit = rule.nbytes if rule.nbytes is not None else (total // 2 if total else 0)
            if total is not None:
                limit = min(limit, max(total - 1, 0))
            faults.append("truncate:%d/%s" % (limit, total if total is not None else "?"))
            log.entry(seq, method, target, status, faults)
            self.client.send(resp.raw)
            try:
                relay_body(self.up, fr, self.client.send, limit=limit)
            except Closed:
                pass
            self.drop_up()
            try:
                self.client.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            return False

        log.entry(seq, method, target, status, faults)
        try:
            self.client.send(resp.raw)
            relay_body(self.up, fr, self.client.send)
        except Closed:
            self.drop_up()
            return False
        if not up_keep:
            self.drop_up()
            return False
        return keep

    # -- helpers ------------------------------------------------------------
    def client_keepalive(self, req, version):
        conn = req.tokens("connection")
        if "close" in conn:
            return False
        if version == "HTTP/1.0" and "keep-alive" not in conn:
            return False
        return True

    def upstream_keepalive(self, resp, framing):
        if framing[0] == "eof":
            return False
        if "close" in resp.tokens("connection"):
            return False
        if resp.first.startswith(b"HTTP/1.0") and "keep-alive" not in resp.tokens("connection"):
            return False
        return True

    def forward_streaming(self, req, rframing, expect):
        """Send the request upstream, streaming its body from the client;
        relay an interim 100.  Returns the final response head (with
        .expect_refused set) or None if the client connection broke."""
        self.up.send(req.raw)
        refused = False
        if expect:
            resp = read_head(self.up)
            if status_of(resp) == 100:
                try:
                    self.client.send(resp.raw)
                    relay_body(self.client, rframing, self.up.send)
                except Closed:
                    self.drop_up()
                    return None
                resp = self.read_final()
            else:
                refused = True  # a final answer without the body
        else:
            try:
                relay_body(self.client, rframing, self.up.send)
            except Closed:
                self.drop_up()
                return None
            resp = self.read_final()
        resp.expect_refused = refused
        return resp

    def read_final(self):
        while True:
            resp = read_head(self.up)
            if status_of(resp) != 100:
                return resp

    def send_buffered(self, req, body, method):
        """Send a whole request upstream; return (head, body bytes)."""
        self.up.send(req.raw)
        if "100-continue" in req.tokens("expect") and body:
            resp = read_head(self.up)
            if status_of(resp) == 100:
                self.up.send(body)
                resp = self.read_final()
            else:
                self.drop_up()  # it did not take the body: do not reuse
                out = []
                fr = response_framing(method, resp)
                return resp, fr, out
        else:
            self.up.send(body)
            resp = self.read_final()
        fr = response_framing(method, resp)
        out = []
        relay_body(self.up, fr, out.append)
        if not self.upstream_keepalive(resp, fr):
            self.drop_up()
        return resp, fr, out

    def duplicate(self, req, method, target, seq, rframing, expect, keep, rule, faults):
        log = self.proxy.log
        if expect:
            self.client.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        parts = []
        relay_body(self.client, rframing, parts.append)
        body = b"".join(parts)
        replies = []
        for _ in range(2):
            if not self.connect():
                faults.append("upstream-down")
                log.entry(seq, method, target, None, faults)
                self.client.reset()
                return False
            try:
                replies.append(self.send_buffered(req, body, method))
            except Closed:
                faults.append("upstream-down")
                log.entry(seq, method, target, None, faults)
                self.drop_up()
                self.client.reset()
                return False
        first, second = replies
        give = first if rule.reply == "first" else second
        other = second if give is first else first
        faults.append("duplicate:%s=%d" % ("second" if give is first else "first", status_of(other[0])))
        resp, fr, out = give
        log.entry(seq, method, target, status_of(resp), faults)
        self.client.send(resp.raw + b"".join(out))
        if fr[0] == "eof" or "close" in resp.tokens("connection"):
            return False
        return keep

    def send_error(self, rule, method, target, seq, keep):
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                "<Error><Code>%s</Code><Message>injected by faultproxy</Message>"
                "<Resource>%s</Resource><RequestId>faultproxy-%d</RequestId></Error>\n"
                % (rule.code, target.replace("&", "&amp;").replace("<", "&lt;"), seq)).encode()
        head = ("HTTP/1.1 %d %s\r\n"
                "Content-Type: application/xml\r\n"
                "Content-Length: %d\r\n"
                "x-amz-request-id: faultproxy-%d\r\n"
                "Date: %s\r\n"
                "%s"
                "\r\n" % (rule.status, ERROR_TEXT.get(rule.status, "Error"), len(body), seq,
                          time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime()),
                          "" if keep else "Connection: close\r\n")).encode()
        self.client.send(head if method == "HEAD" else head + body)


class Proxy:
    def __init__(self, args):
        up = args.upstream
        if "://" in up:
            up = up.split("://", 1)[1]
        up = up.rstrip("/")
        host, _, port = up.rpartition(":")
        self.upstream = (host or "127.0.0.1", int(port))
        self.log = Log(args.log)
        self.rules = Rules(args.rules, args.rule or [], args.seed, self.log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--upstream", required=True, help="HOST:PORT or http://HOST:PORT")
    ap.add_argument("--listen", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--rules", help="rules file, re-read when it changes")
    ap.add_argument("--rule", action="append", help="a rule (when the file is empty)")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--log")
    ap.add_argument("--tag", help="ignored (lets a harness find the process)")
    args = ap.parse_args()

    proxy = Proxy(args)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((args.listen, args.port))
    ls.listen(256)
    port = ls.getsockname()[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    print(port, flush=True)
    proxy.log.note("listening on %s:%d, upstream %s:%d" % (args.listen, port, *proxy.upstream))
    while True:
        try:
            s, _ = ls.accept()
        except InterruptedError:
            continue
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        Handler(s, proxy).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
