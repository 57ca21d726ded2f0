#!/usr/bin/env bash
# Recall latency with hyperfine, beside /bin/true in the same run, and the
# size of the SessionStart index on a large store.
#
#   bench/recall.sh                 # builds the release binary (static on Linux glibc, as install.sh does)
#   MNEMO_BIN=/path/to/mnemo bench/recall.sh
#   RUNS=100 bench/recall.sh        # fewer runs per command (default 200)
#
# Needs hyperfine (apt-get install hyperfine), python3 and git. Builds two
# synthetic stores with the `synth_store` example (deterministic; written
# through the store's own insert functions, so the FTS and file indexes are
# real): 10,000 observations for the hook paths, and 100,000 in one project
# plus 10,000 in another for search. hyperfine runs each command through sh
# and subtracts the shell's own start-up.
#
# Store states: "held open" means another connection keeps the database open,
# as the worker does in production; hooks then skip the WAL checkpoint on close.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-200}"

if [[ -z "${MNEMO_BIN:-}" ]]; then
    target_args=()
    if [[ "$(uname -s)" == Linux ]] && ldd --version 2>&1 | grep -qi glibc; then
        triple="$(rustc -vV | sed -n 's/^host: //p')"
        export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static"
        target_args=(--target "$triple")
        MNEMO_BIN="target/$triple/release/mnemo"
        SYNTH="target/$triple/release/examples/synth_store"
    else
        MNEMO_BIN="target/release/mnemo"
        SYNTH="target/release/examples/synth_store"
    fi
    cargo build --release --locked -p mnemo -p mnemo-recall --example synth_store "${target_args[@]}"
else
    cargo build --release --locked -p mnemo-recall --example synth_store
    SYNTH="target/release/examples/synth_store"
fi
MNEMO_BIN="$(realpath "$MNEMO_BIN")"
SYNTH="$(realpath "$SYNTH")"

work="$(mktemp -d)"
trap 'kill "${holder10:-0}" "${holder100:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
for p in p10k p100k; do
    mkdir -p "$work/$p" && git -C "$work/$p" init -q
done
"$SYNTH" "$work/d10k/mnemo.db" "$work/p10k" 10000
"$SYNTH" "$work/d100k/mnemo.db" "$work/p100k" 100000 10000
p10k="$(realpath "$work/p10k")"
p100k="$(realpath "$work/p100k")"

# Payloads, a file with history and one without, and the query words (the
# store is deterministic, so they are the same on every run).
python3 - "$work" "$p10k" <<'PY'
import json, sqlite3, sys
work, p10k = sys.argv[1], sys.argv[2]
def dump(name, v):
    json.dump(v, open(f"{work}/{name}.json", "w"))
base = {"session_id": "bench-session", "cwd": p10k}
dump("start", dict(base, hook_event_name="SessionStart", source="startup"))
db = sqlite3.connect(f"{work}/d10k/mnemo.db")
(path,) = db.execute("SELECT path FROM observation_files ORDER BY observation_id DESC LIMIT 1").fetchone()
dump("pre_history", dict(base, hook_event_name="PreToolUse", tool_name="Read",
                         tool_input={"file_path": path}, tool_use_id="toolu_bench"))
dump("pre_none", dict(base, hook_event_name="PreToolUse", tool_name="Read",
                      tool_input={"file_path": f"{p10k}/never/seen.rs"}, tool_use_id="toolu_bench"))
big = sqlite3.connect(f"{work}/d100k/mnemo.db")
(title,) = big.execute("SELECT title FROM observations WHERE id = 50000").fetchone()
words = {"rare": title.split()[-1], "common": "login", "typical": "timeout"}
with open(f"{work}/queries.txt", "w") as f:
    for label, q in [("one rare word", words["rare"]), ("one typical word", words["typical"]),
                     ("the most common word", words["common"]),
                     ("two words", f"{words['typical']} retry"), ("a file path", "src/api")]:
        n = big.execute("SELECT count(*) FROM observations_fts WHERE observations_fts MATCH ?",
                        (" ".join(f'"{w}"' for w in q.split()),)).fetchone()[0]
        f.write(f"{label} ({n} matching observations)\t{q}\n")
PY

# The SessionStart hook creates its session; PreToolUse needs it to exist.
export MNEMO_NO_WORKER=1
MNEMO_DATA_DIR="$work/d10k" "$MNEMO_BIN" hook claude-code SessionStart < "$work/start.json" > /dev/null
hold='import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1]); c.execute("select count(*) from sessions").fetchall(); time.sleep(3600)'
python3 -c "$hold" "$work/d10k/mnemo.db" & holder10=$!
python3 -c "$hold" "$work/d100k/mnemo.db" & holder100=$!
sleep 0.3
forget="python3 -c \"import sqlite3; c=sqlite3.connect('$work/d10k/mnemo.db'); c.execute('DELETE FROM file_context_shown'); c.commit()\""

echo "== Hooks, 10,000 observations (store held open)"
hyperfine --warmup 10 --min-runs "$runs" --export-json "$work/hooks.json" \
    -n '/bin/true' "/bin/true < $work/start.json" \
    -n 'SessionStart (capture + index)' "MNEMO_DATA_DIR=$work/d10k $MNEMO_BIN hook claude-code SessionStart < $work/start.json" \
    -n 'PreToolUse Read, file without history' "MNEMO_DATA_DIR=$work/d10k $MNEMO_BIN hook claude-code PreToolUse < $work/pre_none.json" \
    -n 'PreToolUse Read, history already shown' "MNEMO_DATA_DIR=$work/d10k $MNEMO_BIN hook claude-code PreToolUse < $work/pre_history.json" \
    -n 'PreToolUse Read, history shown (first time)' --prepare "$forget" "MNEMO_DATA_DIR=$work/d10k $MNEMO_BIN hook claude-code PreToolUse < $work/pre_history.json"

echo "== Search, 100,000 observations in the project (+10,000 elsewhere), store held open"
search_args=(-n '/bin/true' "/bin/true")
while IFS=$'\t' read -r label q; do
    search_args+=(-n "search: $label" "cd $p100k && MNEMO_DATA_DIR=$work/d100k $MNEMO_BIN search -n 10 '$q' > /dev/null")
done < "$work/queries.txt"
search_args+=(-n "search --all: one typical word" "cd $p100k && MNEMO_DATA_DIR=$work/d100k $MNEMO_BIN search --all -n 10 timeout > /dev/null")
search_args+=(-n "context (100,000 observations)" "cd $p100k && MNEMO_DATA_DIR=$work/d100k $MNEMO_BIN context > /dev/null")
hyperfine --warmup 10 --min-runs "$runs" --export-json "$work/search.json" "${search_args[@]}"

echo "== Context size, 100,000 observations"
for tokens in 1500 1000000; do
    (cd "$p100k" && MNEMO_DATA_DIR="$work/d100k" MNEMO_CONTEXT_MAX_TOKENS=$tokens "$MNEMO_BIN" context --json) |
        python3 -c "import json,sys; d=json.load(sys.stdin); print(f'context.max_tokens=$tokens: {d[\"chars\"]} characters (UTF-16 units), {len(d[\"observations_shown\"])} of {d[\"observations_total\"]} observations, {len(d[\"summaries_shown\"])} summaries')"
done

python3 - "$work/hooks.json" "$work/search.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    results = json.load(open(path))["results"]
    base = results[0]["median"]
    print()
    print("| command | median | mean ± σ | × /bin/true (median) |")
    print("|---|---:|---:|---:|")
    for r in results:
        print(f"| {r['command']} | {r['median']*1e3:.2f} ms | {r['mean']*1e3:.2f} ± {r['stddev']*1e3:.2f} ms | {r['median']/base:.1f} |")
PY
