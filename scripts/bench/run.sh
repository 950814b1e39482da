#!/usr/bin/env bash
# `npm run bench`: raises the open-files limit (20,000 sockets need as many descriptors on the
# server and on the client side; Palaver and the baselines inherit it), then runs the
# benchmarks with the arguments given. Raising the hard limit needs root (or CAP_SYS_RESOURCE).
ulimit -Hn 1048576 2>/dev/null
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)"
cd "$(dirname "$0")/../.." && exec node --import tsx scripts/bench/index.ts "$@"
