#!/usr/bin/env bash
# `npm run bench`: raises the open-files limit (10,000+ sockets need it; Palaver and the
# baselines inherit it), then runs the benchmarks with the arguments given.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
cd "$(dirname "$0")/../.." && exec node --import tsx scripts/bench/index.ts "$@"
