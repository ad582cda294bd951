#!/bin/sh
# Compares gnnscope's built-in k-way partitioner with METIS 5.1's gpmetis on
# the same graph: edge cut, balance (largest part over average) and time.
#
# Needs gpmetis (Debian: apt-get install -y metis); installs nothing itself.
# Usage: scripts/bench-metis.sh DATA PARTS [SEED]
#   DATA   a preset (synth-small), .npz file, OGB folder or .gsd file
#   PARTS  number of parts
#   SEED   gnnscope partitioner seed (default 0); gpmetis runs with its own
#          default seed
# GNNSCOPE names the gnnscope binary to use; by default it is built from
# this checkout into a temporary folder.
#
# gnnscope writes the graph in METIS .graph format (--write-metis: the
# symmetrized graph, 1-based adjacency lists), gpmetis partitions that file,
# and both assignments are scored by the same rule: cut = undirected edges
# between parts, balance = largest part * PARTS / nodes. Times are each
# tool's own partitioning time, without reading the input.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 DATA PARTS [SEED]" >&2
	exit 2
fi
data=$1
k=$2
seed=${3:-0}
command -v gpmetis >/dev/null 2>&1 || {
	echo "gpmetis not found; install METIS (Debian: apt-get install -y metis)" >&2
	exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gs=${GNNSCOPE:-}
if [ -z "$gs" ]; then
	(cd "$(dirname "$0")/.." && go build -o "$tmp/gnnscope" .)
	gs=$tmp/gnnscope
fi

"$gs" partition --data "$data" --parts "$k" --seed "$seed" --json -q \
	--write-metis "$tmp/g.graph" -o "$tmp/ours.part" >"$tmp/ours.json"
gpmetis "$tmp/g.graph" "$k" >"$tmp/metis.log"
mv "$tmp/g.graph.part.$k" "$tmp/metis.part"

# score GRAPH PART K: prints "cut balance" for an assignment.
score() {
	awk -v k="$3" '
		NR == FNR { part[NR] = $1; size[$1]++; n++; next }
		FNR == 1 { next }
		{ v = FNR - 1; for (i = 1; i <= NF; i++) if ($i > v && part[$i] != part[v]) cut++ }
		END { m = 0; for (p in size) if (size[p] > m) m = size[p]; printf "%d %.3f\n", cut, m * k / n }
	' "$2" "$1"
}
set -- $(score "$tmp/g.graph" "$tmp/ours.part" "$k")
ocut=$1 obal=$2
set -- $(score "$tmp/g.graph" "$tmp/metis.part" "$k")
mcut=$1 mbal=$2
otime=$(sed -n 's/.*"seconds": *\([0-9.e+-]*\).*/\1/p' "$tmp/ours.json")
mtime=$(sed -n 's/.*Partitioning:[[:space:]]*\([0-9.]*\) sec.*/\1/p' "$tmp/metis.log")
mcutlog=$(sed -n 's/.*Edgecut: *\([0-9]*\).*/\1/p' "$tmp/metis.log")
if [ -n "$mcutlog" ] && [ "$mcutlog" != "$mcut" ]; then
	echo "warning: gpmetis reports cut $mcutlog, recount says $mcut" >&2
fi
head=$(head -n 1 "$tmp/g.graph")
printf '%s: %s nodes, %s edges, %s parts\n' "$data" "${head% *}" "${head#* }" "$k"
printf '%-10s %10s %8s %9s\n' tool edge_cut balance time_s
printf '%-10s %10s %8s %9.3f\n' gnnscope "$ocut" "$obal" "$otime"
printf '%-10s %10s %8s %9.3f\n' gpmetis "$mcut" "$mbal" "$mtime"
awk -v a="$ocut" -v b="$mcut" 'BEGIN { if (b > 0) printf "cut ratio gnnscope/gpmetis: %.3f\n", a / b; else printf "cut ratio: gpmetis cut is 0\n" }'
