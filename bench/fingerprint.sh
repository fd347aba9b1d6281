#!/usr/bin/env bash
# Behaviour fingerprint: SHA-256 (first 8 bytes) of metrics.jsonl and
# rounds.jsonl of short runs of every preset family and of the demo.
# Run before and after a change that must not alter results, and diff:
#
#   bench/fingerprint.sh > /tmp/before.txt
#   ... change the code ...
#   bench/fingerprint.sh | diff /tmp/before.txt -
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./bench/fingerprint "$@"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./cmd/trellis demo --rounds 2 --quiet -o "$tmp" > /dev/null
for d in "$tmp"/*/; do
	m=$(sha256sum "$d/metrics.jsonl" | cut -c1-16)
	r=$(sha256sum "$d/rounds.jsonl" | cut -c1-16)
	echo "demo/$(basename "$d") $m $r"
done
