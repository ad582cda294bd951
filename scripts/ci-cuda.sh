#!/usr/bin/env bash
# Type-checks and links the cuda build without a GPU or a driver: the CUDA
# driver API header (cuda.h) and the link stub of libcuda come from Debian's
# nvidia-cuda-dev package, downloaded (non-free component) and unpacked
# without installing it, unless cuda.h is already installed. Then:
#   go vet -tags cuda      (cgo against cuda.h: every driver call type-checks)
#   go build -tags cuda    (the binary must start and train on the CPU,
#                           and --device cuda must fail clearly, here)
#   go test -tags cuda     (the tests that need a GPU skip)
#   ptxgen -check          (the committed PTX is what nvcc makes, where nvcc is)
# Run by .ci/run; the package is cached in $GNNSCOPE_CI_CACHE (default
# ~/.cache/gnnscope-ci) between runs on one machine. GNNSCOPE_CI_UNPACK=1
# takes the package even where cuda.h is installed. GNNSCOPE_CI_NVCC=1
# unpacks Debian's nvcc (scripts/nvcc-local.sh) where none is installed,
# so that ptxgen -check runs.
#
# Where apt has no candidate for nvidia-cuda-dev, the script adds the
# components contrib, non-free and non-free-firmware to the machine's own
# Debian entries (those of its release, with main and without non-free),
# copied from its apt configuration into
# sources.list.d/gnnscope-ci-nonfree.sources (deb822 entries) and
# gnnscope-ci-nonfree.list (one-line entries), which stay for later runs; it
# names no package host of its own and edits no existing file. That needs
# root or sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

# as_root runs a command as root, through sudo where needed.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# candidate prints the version apt would download for nvidia-cuda-dev, or
# nothing when it has none. (apt-cache show is no test: once package lists
# are fresh it succeeds for a name that other packages merely mention.)
candidate() {
  LC_ALL=C apt-cache policy nvidia-cuda-dev 2>/dev/null |
    awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }'
}

# have_lists says whether apt has downloaded any package list yet.
have_lists() {
  local L=""
  eval "$(apt-config shell L Dir::State::lists/d)"
  compgen -G "${L:-/var/lib/apt/lists/}*_Packages*" >/dev/null
}

# nonfree_deb822 prints a copy of every deb822 entry of FILE that serves
# this release (suite CODENAME or CODENAME-*) with main and without
# non-free, its components replaced by those of contrib, non-free and
# non-free-firmware it lacks, its other fields (URIs, Signed-By, ...) kept.
nonfree_deb822() {
  awk -v codename="$2" '
    function lc(s) { return tolower(s) }
    function has(list, w) { return (" " list " ") ~ (" " w " ") }
    function value(i,   v) { v = text[i]; sub(/^[^:]*:[ \t]*/, "", v); gsub(/[ \t\n]+/, " ", v); sub(/ $/, "", v); return v }
    function flush(   i, t, off, comps, suites, s, nsuite, keep, add, w, nw, want) {
      if (n == 0) return
      t = ""; off = 0; comps = ""; suites = ""
      for (i = 1; i <= n; i++) {
        if (name[i] == "types") t = value(i)
        if (name[i] == "components") comps = value(i)
        if (name[i] == "suites") suites = value(i)
        if (name[i] == "enabled" && lc(value(i)) == "no") off = 1
      }
      keep = ""
      nsuite = split(suites, s, " ")
      for (i = 1; i <= nsuite; i++)
        if (codename == "" || s[i] == codename || index(s[i], codename "-") == 1) keep = keep (keep == "" ? "" : " ") s[i]
      if (!off && has(t, "deb") && keep != "" && has(comps, "main") && !has(comps, "non-free")) {
        add = ""
        nw = split("contrib non-free non-free-firmware", want, " ")
        for (w = 1; w <= nw; w++) if (!has(comps, want[w])) add = add (add == "" ? "" : " ") want[w]
        print "Types: deb"
        print "Suites: " keep
        print "Components: " add
        for (i = 1; i <= n; i++)
          if (name[i] != "types" && name[i] != "suites" && name[i] != "components" && name[i] != "enabled") print text[i]
        print ""
      }
      n = 0
    }
    /^#/ { next }
    /^[ \t]*$/ { flush(); next }
    /^[ \t]/ { if (n > 0) text[n] = text[n] "\n" $0; next }
    /^[A-Za-z][A-Za-z0-9-]*:/ { n++; name[n] = lc(substr($0, 1, index($0, ":") - 1)); text[n] = $0; next }
    END { flush() }
  ' "$1"
}

# nonfree_oneline does the same for the one-line entries of FILE
# ("deb [options] URI SUITE COMPONENT...").
nonfree_oneline() {
  awk -v codename="$2" '
    function has(list, w) { return (" " list " ") ~ (" " w " ") }
    {
      line = $0
      sub(/#.*/, "", line)
      nf = split(line, f, /[ \t]+/)
      i = 1
      if (f[i] == "") i++
      if (f[i] != "deb") next
      i++
      opts = ""
      if (substr(f[i], 1, 1) == "[") {
        while (i <= nf) {
          opts = opts (opts == "" ? "" : " ") f[i]
          if (f[i] ~ /\]$/) break
          i++
        }
        i++
      }
      uri = f[i]; suite = f[i + 1]; comps = ""
      for (j = i + 2; j <= nf; j++) if (f[j] != "") comps = comps " " f[j]
      if (uri == "" || suite == "") next
      if (codename != "" && suite != codename && index(suite, codename "-") != 1) next
      if (!has(comps, "main") || has(comps, "non-free")) next
      add = ""
      nw = split("contrib non-free non-free-firmware", want, " ")
      for (w = 1; w <= nw; w++) if (!has(comps, want[w])) add = add " " want[w]
      print "deb " (opts == "" ? "" : opts " ") uri " " suite add
    }
  ' "$1"
}

# add_nonfree writes the non-free copies of the machine's entries into
# their own files, replacing what an earlier run wrote there.
add_nonfree() {
  local SL="" SP="" codename="" f tmp
  eval "$(apt-config shell SL Dir::Etc::sourcelist/f SP Dir::Etc::sourceparts/d)"
  SP=${SP:-/etc/apt/sources.list.d/}
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  tmp=$(mktemp -d)
  : >"$tmp/sources"
  : >"$tmp/list"
  for f in "$SP"*.sources; do
    if [ -f "$f" ] && [ "$(basename "$f")" != gnnscope-ci-nonfree.sources ]; then
      nonfree_deb822 "$f" "$codename" >>"$tmp/sources"
    fi
  done
  for f in "$SL" "$SP"*.list; do
    if [ -f "$f" ] && [ "$(basename "$f")" != gnnscope-ci-nonfree.list ]; then
      nonfree_oneline "$f" "$codename" >>"$tmp/list"
    fi
  done
  as_root rm -f "${SP%/}/gnnscope-ci-nonfree.sources" "${SP%/}/gnnscope-ci-nonfree.list"
  if [ -s "$tmp/sources" ]; then
    echo "adding contrib, non-free and non-free-firmware to the Debian entries of ${SP}*.sources:"
    sed '/./s/^/  /' "$tmp/sources"
    as_root install -m 644 "$tmp/sources" "${SP%/}/gnnscope-ci-nonfree.sources"
  fi
  if [ -s "$tmp/list" ]; then
    echo "adding contrib, non-free and non-free-firmware to the Debian entries of $SL and ${SP}*.list:"
    sed '/./s/^/  /' "$tmp/list"
    as_root install -m 644 "$tmp/list" "${SP%/}/gnnscope-ci-nonfree.list"
  fi
  if [ ! -s "$tmp/sources" ] && [ ! -s "$tmp/list" ]; then
    echo "no apt entry of this Debian release (${codename:-unknown}) lacks non-free: nothing to add"
  fi
  rm -rf "$tmp"
}

# ensure_candidate makes nvidia-cuda-dev downloadable: fresh package lists,
# then, if apt still has no candidate, the non-free component.
ensure_candidate() {
  if ! have_lists; then
    echo "no apt package lists yet: apt-get update"
    as_root apt-get update -qq
  fi
  [ -n "$(candidate)" ] && return 0
  add_nonfree
  as_root apt-get update -qq
  if [ -z "$(candidate)" ]; then
    echo "nvidia-cuda-dev has no candidate even with non-free; apt-cache policy says:" >&2
    LC_ALL=C apt-cache policy nvidia-cuda-dev >&2
    return 1
  fi
}

cache=${GNNSCOPE_CI_CACHE:-$HOME/.cache/gnnscope-ci}
inc="" stub=""
if [ "${GNNSCOPE_CI_UNPACK:-0}" = 1 ]; then
  : # unpack the package even where the headers are installed (to test this path)
elif [ -f /usr/include/cuda.h ]; then
  inc=/usr/include
elif [ -f /usr/local/cuda/include/cuda.h ]; then
  inc=/usr/local/cuda/include
fi
for d in /usr/lib/x86_64-linux-gnu/stubs /usr/local/cuda/lib64/stubs; do
  [ -n "$inc" ] && [ -f "$d/libcuda.so" ] && stub=$d && break
done
if [ -z "$inc" ] || [ -z "$stub" ]; then
  root="$cache/nvidia-cuda-dev"
  if [ ! -f "$root/usr/include/cuda.h" ]; then
    mkdir -p "$cache"
    ensure_candidate
    # A temporary folder that apt's sandbox user may write (the cache may
    # lie in a home it cannot enter).
    dl=$(mktemp -d)
    if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi
    (cd "$dl" && apt-get download -qq nvidia-cuda-dev)
    mkdir -p "$root"
    # Only the header and the link stub; the package is large.
    dpkg-deb --fsys-tarfile "$dl"/nvidia-cuda-dev_*.deb |
      tar -x -C "$root" ./usr/include/cuda.h ./usr/lib/x86_64-linux-gnu/stubs/libcuda.so
    rm -rf "$dl"
  fi
  [ -z "$inc" ] && inc="$root/usr/include"
  [ -z "$stub" ] && stub="$root/usr/lib/x86_64-linux-gnu/stubs"
fi
export CGO_CFLAGS="-I$inc" CGO_LDFLAGS="-L$stub"
echo "cuda.h from $inc, libcuda stub from $stub"
go vet -tags cuda ./gnn/... ./runner/... ./cli/... .
bin=$(mktemp -d)/gnnscope
go build -tags cuda -o "$bin" .
# The cuda binary loads the driver only when a CUDA device is opened: it
# must start and train on the CPU here, and --device cuda must fail with a
# clear error where there is no GPU.
"$bin" --help >/dev/null
"$bin" train --data synth-tiny --epochs 1 --device cpu -q >/dev/null
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "a GPU is present: the no-GPU error is not checked"
elif msg=$("$bin" gpucheck 2>&1); then
  echo "gpucheck passed on a machine without a GPU: $msg" >&2; exit 1
elif ! grep -q "CUDA" <<<"$msg"; then
  echo "gpucheck without a GPU gave an unclear error: $msg" >&2; exit 1
else
  echo "without a GPU, --device cuda says: $msg"
fi
rm -rf "$(dirname "$bin")"
# The tests of the cuda build run here too; those that need a GPU skip.
go test -tags cuda -count=1 ./gnn/device/cuda/... ./gnn/device/backend
nvcc=""
if command -v nvcc >/dev/null; then
  nvcc=nvcc
elif [ "${GNNSCOPE_CI_NVCC:-0}" = 1 ]; then
  nvcc=$(bash scripts/nvcc-local.sh "$cache/nvcc")
fi
if [ -n "$nvcc" ]; then
  (cd gnn/device/cuda && go run ./internal/ptxgen -nvcc "$nvcc" -check)
  echo "committed PTX matches nvcc's output"
else
  echo "nvcc not installed: PTX checked by its source checksums only (go test ./gnn/device/cuda); GNNSCOPE_CI_NVCC=1 unpacks Debian's"
fi
