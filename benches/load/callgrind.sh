#!/usr/bin/env bash
# Instructions per call of one Rust server of the MCP load bench, counted by callgrind (a
# measure a shared machine's load cannot move): the server runs under valgrind on one worker
# thread, is warmed up with WARM calls, its counters are zeroed, CALLS calls are made over one
# kept-alive connection, and the counters dumped; it prints the instructions per call.
#
#   benches/load/callgrind.sh ours|ours-jwt|rmcp [CALLS] [WARM]
#
# Build first: (cd benches && cargo build --release -p tool-load-bench).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$HERE/../target/release/mcp-load"
WHICH="${1:?ours|ours-jwt|rmcp}"
CALLS="${2:-2000}"
WARM="${3:-200}"
OUT="$(mktemp -d)"
trap 'kill "$SERVER" 2>/dev/null || true; [ -n "${KEEP:-}" ] && cp "$OUT"/cg.* "$KEEP"/ 2>/dev/null; rm -rf "$OUT"' EXIT

valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.%p" "$BIN" serve "$WHICH" --workers 1 \
    >"$OUT/stdout" 2>"$OUT/stderr" &
SERVER=$!
for _ in $(seq 600); do
    grep -q '^listening' "$OUT/stdout" 2>/dev/null && break
    sleep 0.1
done
read -r _ ADDR _ TOKEN <"$OUT/stdout"
"$BIN" call "$ADDR" "$WARM" ${TOKEN:+"$TOKEN"}
callgrind_control -z "$SERVER" >/dev/null 2>&1
"$BIN" call "$ADDR" "$CALLS" ${TOKEN:+"$TOKEN"}
callgrind_control -d "$SERVER" >/dev/null 2>&1
# The dump's `totals:` line.
TOTAL=$(cat "$OUT"/cg.* | awk '/^totals:/ { n += $2 } END { print n }')
echo "$WHICH: $((TOTAL / CALLS)) instructions per call ($TOTAL over $CALLS calls)"
