"""A stand-in OpenAI-compatible `/embeddings` endpoint on 127.0.0.1:PORT: the
same 384 floats for every input (latency only, no meaning).

  python3 standin.py PORT"""
import http.server, json, random, sys
random.seed(11)
V = [random.random() - 0.5 for _ in range(384)]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("content-length", 0)); body = json.loads(self.rfile.read(n) or b"{}")
        inp = body.get("input"); k = len(inp) if isinstance(inp, list) else 1
        out = json.dumps({"object": "list", "model": body.get("model"), "data": [{"object": "embedding", "index": i, "embedding": V} for i in range(k)]}).encode()
        self.send_response(200); self.send_header("content-type", "application/json"); self.send_header("content-length", str(len(out))); self.end_headers(); self.wfile.write(out)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
