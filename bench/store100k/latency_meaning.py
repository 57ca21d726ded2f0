"""Search with embeddings on (standin.py on loopback) and off, on a store
with vectors (vectors.py); interleaved, beside /bin/true.

  PROJECT=… STORE=… SCRATCH_HOME=… QUERIES=… python3 latency_meaning.py RUNS PORT BIN [BIN2 ...]

A BIN written BIN@DIR searches the store DIR/data instead of STORE's (two
binaries whose schema versions differ each get a copy of the store)."""
import os, statistics, subprocess, sys, time
runs = int(sys.argv[1]); port = sys.argv[2]; bins = sys.argv[3:]
proj = os.environ["PROJECT"]
base = dict(os.environ, HOME=os.environ["SCRATCH_HOME"], MNEMO_DATA_DIR=os.environ["STORE"] + "/data")
on = dict(base, MNEMO_EMBEDDINGS_BASE_URL=f"http://127.0.0.1:{port}/v1", MNEMO_EMBEDDINGS_MODEL="stand-in")
report = open(os.environ["QUERIES"] + "/report.txt").read()
question = "how are checkpoint trailers added to commits made during a turn"
scen = [("/bin/true", ["/bin/true"], base)]
for b in bins:
    b, _, own = b.partition("@")
    tag = os.path.basename(b)
    if own:
        base = dict(base, MNEMO_DATA_DIR=own + "/data")
        on = dict(on, MNEMO_DATA_DIR=own + "/data")
    for qn, q in [("typical word", "checkpoint"), ("question", question), ("report 356w", report)]:
        scen.append((f"{tag} off {qn}", [b, "search", "-n", "10", q], base))
        scen.append((f"{tag} on {qn}", [b, "search", "-n", "10", q], on))
samples = {s[0]: [] for s in scen}
def once(s):
    t = time.perf_counter()
    p = subprocess.run(s[1], cwd=proj, env=s[2], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    d = time.perf_counter() - t
    if p.returncode != 0: raise SystemExit(f"{s[0]}: exit {p.returncode}")
    return d
for s in scen:
    for _ in range(2): once(s)
for _ in range(runs):
    for s in scen:
        samples[s[0]].append(once(s))
print(f"runs {runs}, load {os.getloadavg()[0]:.1f}")
print("| scenario | median | p90 |\n|---|---:|---:|")
for s in scen:
    v = sorted(samples[s[0]]); print(f"| {s[0]} | {statistics.median(v)*1000:.1f} ms | {v[int(len(v)*0.9)-1]*1000:.1f} ms |")
