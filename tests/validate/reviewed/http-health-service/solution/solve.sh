#!/bin/bash
cat > /app/server.py <<'PY'
import json
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            body = json.dumps({"status": "ok", "version": "1.2.0"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(404)


HTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
PY
nohup python3 /app/server.py > /tmp/server.log 2>&1 &
for _ in $(seq 50); do python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health')" 2>/dev/null && exit 0; sleep 0.1; done
exit 1
