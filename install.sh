#!/bin/sh
# Builds mnemo, installs the binary with cargo, and wires it into the agents found (Claude Code, Codex)
# (hooks in settings.json, the MCP server in ~/.claude.json).
#
#   ./install.sh              # user scope: ~/.claude/settings.json
#   ./install.sh --dry-run    # show what would change in the settings
#
# Extra arguments go to `mnemo install`. On Linux with glibc the binary is
# linked statically: a hook runs as a fresh process for every agent event,
# and skipping the dynamic loader saves about half a millisecond each time
# (see BENCHMARKS.md).
set -eu
cd "$(dirname "$0")"

command -v cargo >/dev/null 2>&1 || {
    echo "install.sh: cargo is not installed; get Rust from https://rustup.rs and run this again" >&2
    exit 1
}

target_args=""
if [ "$(uname -s)" = Linux ] && ldd --version 2>&1 | grep -qiE 'glibc|gnu libc'; then
    arch="$(uname -m)"
    case "$arch" in
        x86_64 | aarch64)
            target_args="--target ${arch}-unknown-linux-gnu"
            RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static"
            export RUSTFLAGS
            ;;
    esac
fi

# shellcheck disable=SC2086 # target_args is empty or two words on purpose
cargo install --locked --path crates/mnemo $target_args

bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin/mnemo"
"$bin" install "$@"
case ":$PATH:" in
    *":$(dirname "$bin"):"*) ;;
    *) echo "note: add $(dirname "$bin") to PATH to run \`mnemo\` by name (hooks use the full path already)" ;;
esac
