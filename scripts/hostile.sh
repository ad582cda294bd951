#!/usr/bin/env bash
# Runs gnnscope on every case of the hostile-input corpus
# (testdata/hostile/cases.tsv, written by scripts/hostile-gen.py) and prints
# a table: exit status, verdict, peak RSS, writes outside the store, and the
# first line of the error.
#
# Each case runs in a scratch folder of its own, with GNNSCOPE_HOME (the
# store and the dataset cache), HOME and TMPDIR inside it, under
# `ulimit -v` of 4 GiB, a time limit, and /usr/bin/time -v for the peak RSS.
# A case fails when the binary
#   - dies of a Go fatal error, a panic or a signal;
#   - runs past the time limit (a hang);
#   - creates or changes anything in the scratch folder outside the store
#     (the case's own input included);
#   - fails where the case expects success, or succeeds where it expects an
#     error;
#   - fails with a first error line that does not name the case's file
#     (or session, or flag value).
# The script exits 1 when any case fails.
#
# Usage: scripts/hostile.sh [-b BINARY] [-o OUTDIR] [-t SECONDS] [REGEX]
#   -b  the gnnscope binary (default: built from this tree)
#   -o  where each case's stdout, stderr and time -v output go
#       (default: a temporary folder, removed at the end)
#   -t  time limit per case (default 60)
#   REGEX  run only the cases whose id matches
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
corpus=$repo/testdata/hostile
bin= out= limit=60
while getopts "b:o:t:h" o; do
  case $o in
    b) bin=$(realpath "$OPTARG") ;;
    o) out=$OPTARG ;;
    t) limit=$OPTARG ;;
    *) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
only=${1:-.}
[ -x /usr/bin/time ] || { echo "hostile.sh: needs /usr/bin/time (GNU time)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gnnscope-hostile.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
if [ -z "$bin" ]; then
  echo "building gnnscope ..." >&2
  go build -o "$work/gnnscope" . || exit 2
  bin=$work/gnnscope
fi
if [ -z "$out" ]; then out=$work/out; fi
mkdir -p "$out"
out=$(realpath "$out")
root=$(id -u)

# setup_case ID SETUP: prepares $scratch for the case; sets $input, $sid,
# $ulimit_f, $skip and $pids (processes to kill afterwards).
setup_case() {
  local id=$1 verb arg src
  input= sid= ulimit_f= skip= pids=
  src=$(ls -d "$corpus/in/$id" "$corpus/in/$id".* 2>/dev/null | head -1)
  if [ -n "$src" ]; then
    cp -r "$src" "$scratch/in/"
    input=$scratch/in/$(basename "$src")
  fi
  for verb in $2; do
    arg=${verb#*:}
    case $verb in
      -) ;;
      session)
        cp -r "$input"/. "$scratch/home/sessions/"
        sid=$(ls "$scratch/home/sessions" | head -1)
        ;;
      fifo:*)
        if [ -n "$sid" ]; then mkfifo "$scratch/home/sessions/$sid/$arg"
        else mkfifo "$scratch/in/$arg"; input=$scratch/in/$arg; fi
        ;;
      bigline:*)
        local j=$scratch/home/sessions/$sid/runs/baseline.jsonl
        { head -n -1 "$j"; printf '{"t":"metric","name":"'; head -c "$((arg << 20))" /dev/zero | tr '\0' x
          printf '"}\n'; tail -n 1 "$j"; } >"$j.new" && mv "$j.new" "$j"
        ;;
      readonly)
        if [ "$root" = 0 ]; then skip="skipped: root ignores permissions"; fi
        chmod -R a-w "$scratch/home/sessions/$sid"
        ;;
      fsize:*) ulimit_f=$arg ;;
      cache:*)
        GNNSCOPE_HOME=$scratch/home "$bin" datasets generate "$arg" >/dev/null 2>&1
        cp "$input" "$(ls "$scratch/home/cache/$arg"-*.gsd | head -1)"
        ;;
      nopid) start_running ;;
      *) echo "hostile.sh: case $id: unknown setup $verb" >&2; skip="bad setup $verb" ;;
    esac
  done
}

# start_running launches a long run in the background, waits until its
# worker has started, and removes every pid file of the session.
start_running() {
  GNNSCOPE_HOME=$scratch/home "$bin" run --data synth-small --epochs 1000 --variants baseline --quiet >/dev/null 2>&1
  sid=$(ls "$scratch/home/sessions" | head -1)
  local d=$scratch/home/sessions/$sid k
  for k in $(seq 100); do
    [ -s "$d/runs/baseline.pid" ] && [ -s "$d/runs/baseline.jsonl" ] && break
    sleep 0.2
  done
  pids=$(cat "$d"/sequencer.pid "$d"/runs/*.pid 2>/dev/null | grep -o '"pid": *[0-9]*' | grep -o '[0-9]*$')
  rm -f "$d"/sequencer.pid "$d"/runs/*.pid
}

subst() {
  local s=$1
  s=${s//\{in\}/$input}
  s=${s//\{sid\}/$sid}
  s=${s//\{home\}/$scratch/home}
  printf '%s' "$s"
}

declare -A total=()
failed=0 cases=0
printf '%-30s %4s  %-5s %8s  %-7s  %s\n' CASE RC VERD "RSS MiB" OUTSIDE "FIRST ERROR LINE (or why it failed)"
while IFS=$'\t' read -r id setup args expect names what; do
  case $id in ''|'#'*) continue ;; esac
  [[ $id =~ $only ]] || continue
  cases=$((cases + 1))
  scratch=$work/case/$id
  mkdir -p "$scratch"/{home/sessions,in,cwd,tmp,userhome}
  setup_case "$id" "$setup"
  if [ -n "$skip" ]; then
    printf '%-30s %4s  %-5s %8s  %-7s  %s\n' "$id" - SKIP - - "$skip"
    continue
  fi
  read -r -a argv <<<"$(subst "$args")"
  o=$out/$id
  mkdir -p "$o"
  touch "$scratch/.marker"
  (
    cd "$scratch/cwd" || exit 2
    ulimit -v 4194304
    [ -n "$ulimit_f" ] && ulimit -f "$ulimit_f"
    exec env -u XDG_DATA_HOME -u XDG_CACHE_HOME GNNSCOPE_HOME="$scratch/home" HOME="$scratch/userhome" \
      TMPDIR="$scratch/tmp" NO_COLOR=1 timeout -k 5 "$limit" /usr/bin/time -v -o "$o/time.txt" \
      "$bin" "${argv[@]}" </dev/null >"$o/stdout" 2>"$o/stderr"
  )
  rc=$?
  for p in $pids; do kill -9 -- "-$p" "$p" 2>/dev/null; done
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$o/time.txt" 2>/dev/null)
  outside=$(find "$scratch" -path "$scratch/home" -prune -o -newer "$scratch/.marker" -print 2>/dev/null |
    grep -v -x -e "$scratch" -e "$scratch/.marker" | sed "s|^$scratch/||" | head -3 | paste -sd, -)
  errline=$(grep -m1 -E '^(gnnscope: |Error: )' "$o/stderr" | cut -c1-400)
  [ -z "$errline" ] && errline=$(head -1 "$o/stderr" | cut -c1-400)
  errline=${errline//$scratch\//}   # paths relative to the case's scratch folder
  want=$names
  [ "$want" = "{in}" ] && want=$(basename "$input")
  [ "$want" = "{sid}" ] && want=$sid
  why=
  if grep -q -E '^(fatal error:|panic:|unexpected fault|SIGBUS|SIGSEGV)|^goroutine [0-9]+ \[' "$o/stderr"; then
    why="crash: $(grep -m1 -E '^(fatal error|panic|unexpected fault|SIGBUS|SIGSEGV)' "$o/stderr")"
    total[crash]=$((${total[crash]:-0} + 1))
  elif [ $rc = 124 ] || [ $rc = 137 ]; then
    why="hang: past ${limit}s"
    total[hang]=$((${total[hang]:-0} + 1))
  elif [ $rc -gt 128 ]; then
    why="killed by signal $((rc - 128))"
    total[crash]=$((${total[crash]:-0} + 1))
  elif [ -n "$outside" ]; then
    why="wrote outside the store: $outside"
    total[outside]=$((${total[outside]:-0} + 1))
  elif [ "$expect" = ok ] && [ $rc != 0 ]; then
    why="expected success"
    total[outcome]=$((${total[outcome]:-0} + 1))
  elif [ "$expect" = err ] && [ $rc = 0 ]; then
    why="expected an error, exit 0"
    total[outcome]=$((${total[outcome]:-0} + 1))
  elif [ $rc != 0 ] && [ "$want" != - ] && [[ $errline != *"$want"* ]]; then
    why="error does not name $want"
    total[unnamed]=$((${total[unnamed]:-0} + 1))
  fi
  verdict=ok
  [ -n "$why" ] && { verdict=FAIL; failed=$((failed + 1)); errline="$why | $errline"; }
  printf '%-30s %4s  %-5s %8s  %-7s  %s\n' "$id" "$rc" "$verdict" "${rss:--}" "$([ -n "$outside" ] && echo yes || echo no)" "${errline:0:160}"
done <"$corpus/cases.tsv"
echo
printf 'cases %d, failed %d: crashes %d, hangs %d, writes outside the store %d, unexpected outcomes %d, errors not naming their file %d\n' \
  "$cases" "$failed" "${total[crash]:-0}" "${total[hang]:-0}" "${total[outside]:-0}" "${total[outcome]:-0}" "${total[unnamed]:-0}"
[ $failed = 0 ]
