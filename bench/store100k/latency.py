"""Whole-process latency on a large store, interleaved round-robin, beside
/bin/true: search (five queries), SessionStart and prompt recall (a session
of their own per run), `mnemo context`.

  PROJECT=<replayed project dir> STORE=<dir with data/mnemo.db> SCRATCH_HOME=<dir> \
  QUERIES=<dir with report.txt, plan.txt> SCEN=search,hooks,context \
  python3 latency.py RUNS BIN [BIN2 ...]

STORE may list one directory per binary, comma-separated (a binary whose
schema is newer migrates its store, which the older one then refuses).
MNEMO_NO_WORKER=1 in the environment keeps the hooks from starting a worker.

Needs apsw (pip install apsw)."""
import json, os, resource, statistics, subprocess, sys, time
runs = int(sys.argv[1]); bins = sys.argv[2:]
proj = os.environ["PROJECT"]
stores = os.environ["STORE"].split(",")
stores = dict(zip(bins, stores * len(bins) if len(stores) == 1 else stores))
env = dict(os.environ, HOME=os.environ["SCRATCH_HOME"])
env.pop("CLAUDE_PROJECT_DIR", None)
report = open(os.environ["QUERIES"] + "/report.txt").read()
plan = open(os.environ["QUERIES"] + "/plan.txt").read()
question = "how are checkpoint trailers added to commits made during a turn"
sess = {"session_id": "speed-bench-100k", "cwd": proj}
def hook(ev, **kw):
    # A new session per run: the same event again within seconds is a
    # repeated delivery, which capture drops and answers without memory.
    return lambda n: json.dumps(dict(sess, session_id=f"speed-{ev}-{n}-{time.time()}", hook_event_name=ev, **kw)).encode()
scen = [("/bin/true", None, ["/bin/true"], None)]
which = os.environ.get("SCEN", "search,hooks,context").split(",")
for b in bins:
    tag = os.path.basename(b)
    if "hooks" in which:
        scen += [
            (f"{tag} SessionStart", b, [b, "hook", "claude-code", "SessionStart"], hook("SessionStart", source="startup")),
            (f"{tag} UserPromptSubmit (question)", b, [b, "hook", "claude-code", "UserPromptSubmit"], hook("UserPromptSubmit", prompt="why did commits made during a turn get no checkpoint trailer?")),
        ]
    if "context" in which:
        scen += [(f"{tag} context", b, [b, "context"], None)]
    if "search" in which:
        scen += [
            (f"{tag} search checkpoint", b, [b, "search", "-n", "10", "checkpoint"], None),
            (f"{tag} search trailer", b, [b, "search", "-n", "10", "trailer"], None),
            (f"{tag} search question", b, [b, "search", "-n", "10", question], None),
            (f"{tag} search report 356w", b, [b, "search", "-n", "10", report], None),
            (f"{tag} search plan 320w", b, [b, "search", "-n", "10", plan], None),
        ]
samples = {s[0]: [] for s in scen}
# CPU time (user + system) of each run beside its wall time: on a shared
# machine the wall time includes waiting for a core, the CPU time does not.
cpu = {s[0]: [] for s in scen}
import apsw
dbs = {}
for b, d in stores.items():
    dbs[b] = apsw.Connection(d + "/data/mnemo.db")
    dbs[b].setbusytimeout(5000)
counter = 0
def once(s):
    run_env = env if s[1] is None else dict(env, MNEMO_DATA_DIR=stores[s[1]] + "/data")
    if "UserPromptSubmit" in s[0] or "SessionStart" in s[0]:
        dbs[s[1]].execute("DELETE FROM recall_shown")
    global counter
    counter += 1
    payload = s[3](counter) if s[3] else None
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(s[2], cwd=proj, env=run_env, input=payload, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0: raise SystemExit(f"{s[0]}: exit {p.returncode}")
    return d, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
for s in scen:
    for _ in range(3): once(s)
for _ in range(runs):
    for s in scen:
        wall, used = once(s)
        samples[s[0]].append(wall)
        cpu[s[0]].append(used)
print(f"runs {runs}, load {os.getloadavg()[0]:.1f}")
print("| scenario | median | p90 | CPU median |\n|---|---:|---:|---:|")
for s in scen:
    v = sorted(samples[s[0]]); med = statistics.median(v) * 1000; p90 = v[int(len(v) * 0.9) - 1] * 1000
    c = statistics.median(cpu[s[0]]) * 1000
    print(f"| {s[0]} | {med:.1f} ms | {p90:.1f} ms | {c:.1f} ms |")
