#!/usr/bin/env python3
"""A hostile S3 endpoint for tests/cli/list_bounds.sh (stdlib only).

    endless.py MODE    MODE: names (pages of 100 keys, each ending truncated
                       with a new continuation token: a listing without end)
                       or empty (truncated pages of no key at all)

Listens on 127.0.0.1 (a port the kernel picks, printed on stdout once
listening) and answers every request as a bucket whose ListObjectsV2 never
ends; any other request gets 404.  Signatures are not checked.  Counts the
list requests it answered in the file named by $ENDLESS_COUNT (if set).
"""

import http.server
import os
import sys
import urllib.parse

MODE = sys.argv[1] if len(sys.argv) > 1 else "names"
served = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self):
        self.reply(404)

    def do_GET(self):
        global served
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        if "list-type" not in q:
            self.reply(404, b"<Error><Code>NoSuchKey</Code></Error>")
            return
        served += 1
        if os.environ.get("ENDLESS_COUNT"):
            with open(os.environ["ENDLESS_COUNT"], "w") as f:
                f.write("%d\n" % served)
        prefix = q.get("prefix", [""])[0]
        keys = ""
        if MODE == "names":
            for i in range(100):
                keys += ("<Contents><Key>%s%016x</Key><Size>100</Size></Contents>"
                         % (prefix, served * 100 + i))
        body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                "<ListBucketResult><Name>b</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount>"
                "<MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>%s"
                "<NextContinuationToken>t%d</NextContinuationToken></ListBucketResult>"
                % (prefix, 100 if MODE == "names" else 0, keys, served)).encode()
        self.reply(200, body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
