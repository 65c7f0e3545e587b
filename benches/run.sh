#!/usr/bin/env bash
# The benchmark harness of tool-runtime: builds and runs everything, side by side
# with rmcp and rig, and prints one table of figures and ratios.
#
#   benches/run.sh                 # full run
#   QUICK=1 benches/run.sh         # short run (indicative only)
#   UPDATE_RESULTS=1 benches/run.sh  # also put the table into benches/RESULTS.md
#
# Everything it builds or writes goes under benches/target (git-ignored): the criterion
# results, bench-results/*.json, the generated compile-time crates and their target dir.
# It needs cargo, and installs hyperfine with apt-get when it can (else it times with
# /usr/bin/time or bash); with valgrind it also counts instructions per call.
# benches/Cargo.lock pins the peers; cargo adds to it only what tool-runtime's own
# dependencies need. The machine may be shared: every figure is a ratio to a baseline
# measured in the same run, times are CPU times where they can be, and the compile timings
# take turns between the frameworks.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
TARGET="$HERE/target"
RESULTS="$TARGET/bench-results"
QUICK="${QUICK:-0}"
export QUICK

if [ "$QUICK" = "1" ]; then
    CRIT=(--warm-up-time 0.5 --measurement-time 1.5 --noplot)
    REPS="${REPS:-1}"
else
    CRIT=(--warm-up-time 2 --measurement-time 4 --noplot)
    REPS="${REPS:-3}"
fi
TOOLS="${TOOLS:-100}"

step() { printf '\n==> %s\n' "$*" >&2; }

cd "$HERE"
mkdir -p "$RESULTS"
rm -rf "$RESULTS"/*.json "$RESULTS"/table.md "$RESULTS/compile"
# Criterion keeps its last results; clear them so the table holds this run only.
rm -rf "$TARGET/criterion"
export BENCH_RESULTS="$RESULTS"

# --- tools -------------------------------------------------------------------------------
HYPERFINE=""
if command -v hyperfine >/dev/null 2>&1; then
    HYPERFINE="$(command -v hyperfine)"
elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
    step "installing hyperfine"
    if apt-get install -y -qq hyperfine >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq hyperfine >/dev/null 2>&1; }; then
        HYPERFINE="$(command -v hyperfine || true)"
    fi
fi
[ -n "$HYPERFINE" ] || echo "hyperfine unavailable: timing compile runs with /usr/bin/time or bash" >&2

# --- what is measured, on what -------------------------------------------------------------
lock_version() { # the version of a package in benches/Cargo.lock (its newest, when it has several:
    # the lock lists them in ascending order; schemars 0.8 comes in with Restate's SDK)
    awk -v name="$1" '$0 == "name = \"" name "\"" { getline; gsub(/version = |"/, ""); v = $0 }
        END { print v }' "$HERE/Cargo.lock"
}
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || echo unknown)"
cat >"$RESULTS/meta.json" <<EOF
{
  "date": "$(date -u +%Y-%m-%dT%H:%MZ)",
  "cpu": "${cpu//\"/}",
  "cores": "$(nproc)",
  "load": "$(cut -d' ' -f1-3 /proc/loadavg)",
  "rustc": "$(rustc --version)",
  "commit": "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD -- tool-core tool-macros tool-runtime 2>/dev/null || echo '+local changes')",
  "rmcp": "$(lock_version rmcp)",
  "rig_core": "$(lock_version rig-core)",
  "rig_agent": "$(lock_version rig-agent)",
  "schemars": "$(lock_version schemars)",
  "serde_json": "$(lock_version serde_json)",
  "quick": "$QUICK",
  "reps": "$REPS",
  "tools": "$TOOLS",
  "hyperfine": "$([ -n "$HYPERFINE" ] && "$HYPERFINE" --version || true)"
}
EOF

# --- build ---------------------------------------------------------------------------------
step "building the harness (release; the first build compiles rmcp and rig)"
cargo build -q -p bench-tools
cargo build --release -p tool-bench --benches --bins

# --- 1. call overhead ----------------------------------------------------------------------
step "1. call overhead (criterion, then the interleaved pass)"
cargo bench -q -p tool-bench --bench call -- "${CRIT[@]}"

# --- 1c. instructions per call ------------------------------------------------------------
# Instruction counts do not depend on what else the machine runs: a check on the ratios.
if command -v valgrind >/dev/null 2>&1; then
    step "1c. instructions per call (valgrind --tool=callgrind)"
    # A copy without debug info: valgrind reads it much sooner.
    PROFILE="$TARGET/release/profile.stripped"
    objcopy --strip-debug "$TARGET/release/profile" "$PROFILE" 2>/dev/null ||
        cp "$TARGET/release/profile" "$PROFILE"
    CALLS=$([ "$QUICK" = "1" ] && echo 300 || echo 1000)
    instructions() { # <framework> <case> <calls>: instructions of the whole process
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$PROFILE" "$1" "$2" "$3" 2>&1 |
            awk '/Collected/ { print $4 }'
    }
    {
        echo "{\"calls\": $CALLS, \"per_call\": {"
        sep=""
        for fw in baseline ours ours-builder rmcp rig; do
            n0=$(instructions "$fw" valid 0)
            for case in valid invalid; do
                n1=$(instructions "$fw" "$case" "$CALLS")
                printf '%s"%s/%s": %s' "$sep" "$fw" "$case" $(((n1 - n0) / CALLS))
                sep=", "
            done
        done
        echo "}}"
    } >"$RESULTS/instructions.json"
else
    echo "valgrind unavailable: no instruction counts" >&2
fi

# --- 2. run loop -----------------------------------------------------------------------------
step "2. run-loop overhead"
cargo bench -q -p tool-bench --bench runloop -- "${CRIT[@]}"

# --- 2b. run-loop instructions -----------------------------------------------------------
if command -v valgrind >/dev/null 2>&1; then
    step "2b. run-loop instructions (valgrind --tool=callgrind)"
    PROFILE="$TARGET/release/profile.stripped"
    objcopy --strip-debug "$TARGET/release/profile" "$PROFILE" 2>/dev/null ||
        cp "$TARGET/release/profile" "$PROFILE"
    RUNS=$([ "$QUICK" = "1" ] && echo 10 || echo 40)
    counted() { # <function pattern> <profile args…>: instructions spent inside the function
        local pattern="$1"
        shift
        valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect="$pattern" \
            "$PROFILE" "$@" 2>&1 | awk '/Collected/ { print $4 }'
    }
    {
        printf '{"runs": %s, "ping": %s, "per_run": {' "$RUNS" \
            $(($(counted '*ping_once*' ping 1000) / 1000))
        sep=""
        for config in "10 0 0" "10 1 0" "10 8 0" "10 64 0" "100 8 0" "1000 8 0" "10 8 256" "10 8 4096" \
            "10 8 0 output" "10 8 4096 output"; do
            set -- $config
            printf '%s"%s/%s/%s%s": %s' "$sep" "$1" "$2" "$3" "${4:+/$4}" \
                $(($(counted '*run_once*' runloop "$1" "$2" "$3" "$RUNS" ${4:-}) / RUNS))
            sep=", "
        done
        echo "}}"
    } >"$RESULTS/runloop-instructions.json"
fi

# --- 4. memory -----------------------------------------------------------------------------
step "4. memory"
MEMORY="$TARGET/release/memory"
"$MEMORY" per-tool >"$RESULTS/memory-per-tool.json"
for fw in baseline ours-invoke ours-agent rmcp rig; do
    "$MEMORY" run "$fw" >"$RESULTS/memory-run-$fw.json"
done

# --- 6. many runs at once ---------------------------------------------------------------
# Before 1b, which relinks the binaries without the peers. RUNS (10,000; QUICK=1: 1,000) runs
# of one agent on one runtime: in flight, paused, and how fast they go.
step "6. many runs at once"
"$TARGET/release/many_runs" >"$RESULTS/many-runs.json"

# --- 1b. call overhead, tool-runtime alone -------------------------------------------------
# Last of the runtime figures: building without the peers relinks target/release/{profile,memory}.
step "1b. call overhead of tool-runtime built without the peers (serde_json without rig's features)"
cargo bench -q -p tool-bench --no-default-features --bench call -- "${CRIT[@]}"

# --- 3. compile time -----------------------------------------------------------------------
step "3. compile time: generating the crates of $TOOLS tools"
GEN="$TARGET/compile-bench"
CT="$TARGET/compile-target"
cargo run -q -p bench-tools --bin gen-crates -- "$GEN" "$ROOT/tool-runtime" "$TOOLS"
# The same dependency versions as the harness.
cp "$HERE/Cargo.lock" "$GEN/Cargo.lock"
FRAMEWORKS=(baseline ours rmcp rig)
build_cmd() { echo "cargo build --offline -q --manifest-path '$GEN/Cargo.toml' --target-dir '$CT' -p gen-$1"; }
for fw in "${FRAMEWORKS[@]}"; do
    step "3. building the dependencies of gen-$fw (not timed)"
    # Exactly the command that is timed, so nothing but the crate itself is left to build.
    cargo build -q --manifest-path "$GEN/Cargo.toml" --target-dir "$CT" -p "gen-$fw"
done

# measure <out.json> <prepare> <command>: one timed run of <command> after <prepare>, written
# as hyperfine writes it ({"results": [{"times": [wall s], "user": s, "system": s}]}).
measure() {
    local out="$1" prepare="$2" cmd="$3"
    if [ -n "$HYPERFINE" ]; then
        "$HYPERFINE" --style none --runs 1 --prepare "$prepare" "$cmd" --export-json "$out" >/dev/null
    else
        bash -c "$prepare" >/dev/null
        if [ -x /usr/bin/time ]; then
            /usr/bin/time -o "$out" \
                -f '{"results": [{"times": [%e], "user": %U, "system": %S}]}' bash -c "$cmd"
        else
            local t0 t1
            t0=$(date +%s%N)
            bash -c "$cmd"
            t1=$(date +%s%N)
            printf '{"results": [{"times": [%d.%09d]}]}\n' $(((t1 - t0) / 1000000000)) \
                $(((t1 - t0) % 1000000000)) >"$out"
        fi
    fi
}

bump() { # edits the body of one tool of gen-<fw>
    echo "sed -i 's/ rev [0-9]*/ rev '\$(date +%s%N)'/' '$GEN/$1/src/lib.rs'"
}

mkdir -p "$RESULTS/compile"
for rep in $(seq 1 "$REPS"); do
    step "3. compile time, round $rep of $REPS"
    # Rotate the order in each round.
    for i in "${!FRAMEWORKS[@]}"; do
        fw="${FRAMEWORKS[$(((i + rep - 1) % ${#FRAMEWORKS[@]}))]}"
        measure "$RESULTS/compile/$fw-clean-$rep.json" \
            "cargo clean -q --offline --manifest-path '$GEN/Cargo.toml' --target-dir '$CT' -p gen-$fw" \
            "$(build_cmd "$fw")"
        measure "$RESULTS/compile/$fw-edit-$rep.json" "$(bump "$fw")" "$(build_cmd "$fw")"
    done
done

# --- 5. MCP over HTTP under load --------------------------------------------------------------
# Three servers of the same tool over streamable HTTP on 127.0.0.1, each a process of its own,
# measured in turn by one load generator: ours, bare rmcp, and the official Python SDK's (in a
# virtual environment made here from the pinned requirements of the MCP tests; set PYTHON to
# an interpreter that has them to use it instead). Its own package (benches/load), so that
# tool-runtime's `mcp` feature never reaches the call benchmark's build.
step "5. MCP over HTTP under load (tool-runtime, rmcp, the Python SDK)"
cargo build --release -q -p tool-load-bench
MCP_PY=()
REQUIREMENTS="$ROOT/tool-runtime/tests/support/mcp/requirements.txt"
if [ -n "${PYTHON:-}" ]; then
    MCP_PY=(--python "$PYTHON" --script "$HERE/load/python/server.py")
elif command -v python3 >/dev/null 2>&1; then
    VENV="$TARGET/python-mcp-$(sha256sum "$REQUIREMENTS" | cut -c1-16)"
    if [ ! -x "$VENV/bin/python" ]; then
        rm -rf "$VENV.building"
        if python3 -m venv "$VENV.building" &&
            "$VENV.building/bin/python" -m pip install --quiet --disable-pip-version-check \
                -r "$REQUIREMENTS"; then
            mv "$VENV.building" "$VENV"
        else
            echo "could not make the Python SDK's environment: the Python server is not measured" >&2
        fi
    fi
    [ -x "$VENV/bin/python" ] && MCP_PY=(--python "$VENV/bin/python" --script "$HERE/load/python/server.py")
else
    echo "python3 unavailable: the Python server is not measured" >&2
fi
"$TARGET/release/mcp-load" run --out "$RESULTS/mcp-load.json" "${MCP_PY[@]}"

# --- 7. a durable step -------------------------------------------------------------------
# tool-durable's AgentRun (a run of 10 calls: 13 journaled steps and its state writes) beside a
# workflow of Restate's SDK taking 13 bare `ctx.run` steps, on one Restate server and worker, in
# turn; and the same run in one process with no journal. The server is the one the tests
# install (pinned) under target/peers/; installed here with npm when missing.
step "7. a durable step (tool-durable on Restate) beside a bare ctx.run"
RESTATE_DIR="$ROOT/target/peers/restate-server-1.7.12"
if [ -z "${RESTATE_SERVER:-}" ] && [ ! -d "$RESTATE_DIR/node_modules/@restatedev/restate-server-linux-x64" ]; then
    rm -rf "$RESTATE_DIR.building"
    SCARF_ANALYTICS=false npm install --no-audit --no-fund --no-save --ignore-scripts \
        --loglevel=error --prefix "$RESTATE_DIR.building" @restatedev/restate-server@1.7.12 &&
        mv "$RESTATE_DIR.building" "$RESTATE_DIR"
fi
cargo build --release -q -p tool-durable-bench
DURABLE_RUNS=40
[ "$QUICK" = "1" ] && DURABLE_RUNS=10
"$TARGET/release/durable-bench" --runs "$DURABLE_RUNS" --calls 10 --out "$RESULTS/durable.json"

# --- the table -----------------------------------------------------------------------------
echo "{\"seconds\": $SECONDS}" >"$RESULTS/elapsed.json"
step "the table (the run took $((SECONDS / 60)) min $((SECONDS % 60)) s)"
"$TARGET/debug/report" "$TARGET" | tee "$RESULTS/table.md"

if [ "${UPDATE_RESULTS:-0}" = "1" ]; then
    "$TARGET/debug/report" "$TARGET" --update "$HERE/RESULTS.md"
    echo "updated $HERE/RESULTS.md" >&2
fi
