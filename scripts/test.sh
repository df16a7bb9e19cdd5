#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need, then runs
# every test (unit, integration, trybuild, doc tests, benchmarks in test mode).
set -euo pipefail
cd "$(dirname "$0")/.."
PTXAS="$(scripts/install-ptxas.sh | tail -n 1)"
export PTXAS
cargo test --workspace --all-targets
cargo test --workspace --doc
