#!/usr/bin/env bash
# Recall latency beside /bin/true in the same run, and the size of the
# SessionStart index on a large store.
#
#   bench/recall.sh                      # static release binary (as install.sh builds it), 200 runs each
#   MNEMO_BENCH_RUNS=400 bench/recall.sh
#   MNEMO_BIN=/path/to/mnemo bench/recall.sh
#
# The harness is crates/mnemo/benches/recall_latency.rs: it builds two
# synthetic stores with mnemo_recall::synth (deterministic, written through
# the store's own insert functions: 10,000 observations for the hook paths;
# 100,000 in one project plus 10,000 in another for search and context),
# holds both open as the worker does, then spawns each command with a real
# stdin pipe, interleaving scenarios round-robin, and reports medians and
# p90 beside /bin/true. (hyperfine's shell-start subtraction is too coarse
# for sub-millisecond hooks on a noisy 2-core machine, and its apt version
# cannot feed stdin without a shell.)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${MNEMO_BIN:-}" ]]; then
    target_args=()
    if [[ "$(uname -s)" == Linux ]] && ldd --version 2>&1 | grep -qi glibc; then
        triple="$(rustc -vV | sed -n 's/^host: //p')"
        target_args=(--target "$triple")
        MNEMO_BIN="target/$triple/release/mnemo"
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
            cargo build --release --locked -p mnemo "${target_args[@]}"
    else
        MNEMO_BIN="target/release/mnemo"
        cargo build --release --locked -p mnemo
    fi
fi
MNEMO_BENCH_BIN="$(realpath "$MNEMO_BIN")" cargo bench --locked -p mnemo --bench recall_latency
