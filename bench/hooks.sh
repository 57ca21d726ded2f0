#!/usr/bin/env bash
# Whole-process hook latency with hyperfine, beside /bin/true in the same run.
#
#   bench/hooks.sh                 # builds the release binary (static on Linux glibc, as install.sh does)
#   MNEMO_BIN=/path/to/mnemo bench/hooks.sh
#   bench/hooks.sh hosts           # every host's capture hook, and `mnemo install` of every host
#
# Needs hyperfine (apt-get install hyperfine) and python3. hyperfine runs each
# command through sh and subtracts the shell's own start-up, so `< payload`
# redirection costs nothing extra. Two stores: one that only the hook opens
# (the last close checkpoints the WAL) and one held open by another
# connection, as the worker does in production.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${MNEMO_BIN:-}" ]]; then
    target_args=()
    if [[ "$(uname -s)" == Linux ]] && ldd --version 2>&1 | grep -qi glibc; then
        triple="$(rustc -vV | sed -n 's/^host: //p')"
        export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static"
        target_args=(--target "$triple")
        MNEMO_BIN="target/$triple/release/mnemo"
    else
        MNEMO_BIN="target/release/mnemo"
    fi
    cargo build --release --locked -p mnemo "${target_args[@]}"
fi
MNEMO_BIN="$(realpath "$MNEMO_BIN")"

work="$(mktemp -d)"
trap 'kill "${holder:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
fixtures=crates/mnemo/tests/fixtures/claude-code
# post.json gets a fresh tool_use_id before every run (--prepare): every run
# stores a new event. The duplicate rows deliver the same call again, as a
# hook registered twice does: with its tool id, and without one (hosts that
# give none; the store then compares the call with the session's last ones).
python3 - "$fixtures" "$work" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
post = json.load(open(f"{src}/PostToolUse.Bash.json"))
json.dump(post, open(f"{out}/post.json", "w"))
json.dump(post, open(f"{out}/again.json", "w"))
noid = dict(post); noid.pop("tool_use_id", None)
json.dump(noid, open(f"{out}/again-noid.json", "w"))
skip = dict(noid, tool_name="ToolSearch"); json.dump(skip, open(f"{out}/skip.json", "w"))
for name in ["PreToolUse.Bash", "SessionStart"]:
    json.dump(json.load(open(f"{src}/{name}.json")), open(f"{out}/{name}.json", "w"))
PY

export MNEMO_NO_WORKER=1

# `hosts`: each host's PostToolUse capture (recorded payloads in
# bench/payloads), store held open, beside /bin/true; then `mnemo install
# --platform all` into a fresh HOME with every host present, and again over
# an installed one.
if [[ "${1:-}" == hosts ]]; then
    MNEMO_DATA_DIR="$work/held" "$MNEMO_BIN" hook claude-code SessionStart < "$work/SessionStart.json" >/dev/null
    python3 -c 'import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1]); c.execute("select count(*) from sessions").fetchall(); time.sleep(3600)' "$work/held/mnemo.db" &
    holder=$!
    sleep 0.3
    runs=(-n '/bin/true' "/bin/true < $work/post.json"
          -n 'claude-code' "MNEMO_DATA_DIR=$work/held $MNEMO_BIN hook claude-code PostToolUse < $work/post.json")
    for payload in bench/payloads/*.PostToolUse.json; do
        host="$(basename "$payload" .PostToolUse.json)"
        label="$host"
        if MNEMO_DATA_DIR="$work/held" "$MNEMO_BIN" hook "$host" PostToolUse < "$payload" 2>&1 >/dev/null | grep -q 'not supported yet'; then
            label="$host (no adapter yet: stdin drained, nothing stored)"
        fi
        runs+=(-n "$label" "MNEMO_DATA_DIR=$work/held $MNEMO_BIN hook $host PostToolUse < $payload")
    done
    mkdir -p "$work/bin"
    for program in claude codex gemini cursor-agent opencode; do
        printf '#!/bin/sh\n' > "$work/bin/$program"; chmod +x "$work/bin/$program"
    done
    install_env="env -i PATH=$work/bin HOME=$work/ihome MNEMO_DATA_DIR=$work/idata"
    hyperfine --warmup 20 --min-runs 300 --export-json "$work/result.json" "${runs[@]}"
    hyperfine --warmup 5 --min-runs 100 --export-json "$work/fresh.json" \
        --prepare "rm -rf $work/ihome $work/idata" \
        -n 'install, fresh HOME, every host present' "$install_env $MNEMO_BIN install --no-import >/dev/null"
    hyperfine --warmup 5 --min-runs 100 --export-json "$work/again.json" \
        -n 'install again (nothing to change)' "$install_env $MNEMO_BIN install --no-import >/dev/null"
    python3 - "$work/result.json" "$work/fresh.json" "$work/again.json" <<'PY'
import json, sys
results = [r for f in sys.argv[1:] for r in json.load(open(f))["results"]]
base = results[0]["median"]
print("| command | median | mean ± σ | × /bin/true (median) |")
print("|---|---:|---:|---:|")
for r in results:
    ratio = f"{r['median']/base:.1f}" if base > 0 else "n/a (/bin/true at 0 after shell correction)"
    print(f"| {r['command']} | {r['median']*1e3:.2f} ms | {r['mean']*1e3:.2f} ± {r['stddev']*1e3:.2f} ms | {ratio} |")
PY
    exit 0
fi

for store in sole held; do
    MNEMO_DATA_DIR="$work/$store" "$MNEMO_BIN" hook claude-code SessionStart < "$work/SessionStart.json" >/dev/null
done
# Hold the second store open for the whole run.
python3 -c 'import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1]); c.execute("select count(*) from sessions").fetchall(); time.sleep(3600)' "$work/held/mnemo.db" &
holder=$!
sleep 0.3

cat > "$work/fresh-id.sh" <<SH
sed -i -E "s/\"tool_use_id\": \"[^\"]*\"/\"tool_use_id\": \"bench-\$(date +%s%N)\"/" "$work/post.json"
SH
hyperfine --warmup 20 --min-runs 300 --export-json "$work/result.json" \
    --prepare "sh $work/fresh-id.sh" \
    -n '/bin/true' "/bin/true < $work/post.json" \
    -n 'PostToolUse, store held open' "MNEMO_DATA_DIR=$work/held $MNEMO_BIN hook claude-code PostToolUse < $work/post.json" \
    -n 'PostToolUse, sole connection' "MNEMO_DATA_DIR=$work/sole $MNEMO_BIN hook claude-code PostToolUse < $work/post.json" \
    -n 'PostToolUse again, same tool id' "MNEMO_DATA_DIR=$work/held $MNEMO_BIN hook claude-code PostToolUse < $work/again.json" \
    -n 'PostToolUse again, no tool id' "MNEMO_DATA_DIR=$work/held $MNEMO_BIN hook claude-code PostToolUse < $work/again-noid.json" \
    -n 'PreToolUse' "MNEMO_DATA_DIR=$work/held $MNEMO_BIN hook claude-code PreToolUse < $work/PreToolUse.Bash.json" \
    -n 'PostToolUse, skipped tool' "MNEMO_DATA_DIR=$work/held $MNEMO_BIN hook claude-code PostToolUse < $work/skip.json" \
    -n 'MNEMO_DISABLED=1' "MNEMO_DISABLED=1 $MNEMO_BIN hook claude-code PostToolUse < $work/post.json"
python3 - "$work/result.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
base = results[0]["median"]
print("| command | median | mean ± σ | × /bin/true (median) |")
print("|---|---:|---:|---:|")
for r in results:
    print(f"| {r['command']} | {r['median']*1e3:.2f} ms | {r['mean']*1e3:.2f} ± {r['stddev']*1e3:.2f} ms | {r['median']/base:.1f} |")
PY
