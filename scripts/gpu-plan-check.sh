#!/usr/bin/env bash
# Keeps the GPU acceptance and its bundle in step, without a GPU (CI):
#
#   - every file gpu-acceptance.sh reads from BUNDLE/scripts or
#     BUNDLE/data is one that gpu-bundle.sh puts there;
#   - every step of the plan names a function the script defines and
#     exports to its steps' shells;
#   - the tests the kernels step runs by name exist in a package whose
#     test binaries gpu-bundle.sh builds;
#   - --dry-run --budget 540 prints a plan that fits, in the issue's order
#     (machine, kernels, versus, sampling, features first).
set -euo pipefail
cd "$(dirname "$0")/.."
acc=scripts/gpu-acceptance.sh bundle=scripts/gpu-bundle.sh
fail=0
bad() { echo "gpu-plan-check: $*" >&2; fail=1; }

# files the acceptance reads from the bundle
for f in $(grep -o '\$BUNDLE/\(scripts\|data\)/[A-Za-z0-9_.-]*' "$acc" | sort -u); do
  base=${f##*/}
  case $f in
    */data/*) grep -q "data/$base" "$bundle" || bad "$acc reads $f, which $bundle does not write" ;;
    *) grep -Eq "^[[:space:]]*cp .*[/ ]$base( |\$)" "$bundle" || grep -qF "\$DIR/scripts/$base" "$bundle" || bad "$acc reads $f, which $bundle does not copy" ;;
  esac
  # what the bundle copies from the tree must exist
  case $base in
    *.py|*.sh) [ -f "scripts/$base" ] || bad "$bundle copies scripts/$base, which does not exist" ;;
    *.toml) [ -f "examples/$base" ] || bad "$bundle copies examples/$base, which does not exist" ;;
  esac
done

# each step's function is defined and exported
exported=$(grep '^export -f' "$acc")
for fn in $(sed -n '/^STEPS=(/,/^)/p' "$acc" | grep -o '^  "[^"]*"' | tr -d '"' | awk -F'|' '{print $4}' | awk '{print $1}' | sort -u); do
  case $fn in \$PYTHON) continue ;; esac
  grep -q "^$fn() {" "$acc" || bad "step function $fn is not defined in $acc"
  [[ " $exported " == *" $fn "* ]] || bad "step function $fn is not in $acc's export -f line"
done

# the tests the kernels step names live in the packages the bundle builds
pkgs=$(grep -o 'GPU_TEST_PKGS:-"[^"]*"' "$bundle" | sed 's/.*:-"//; s/"$//')
for t in $(grep -o "Test[A-Za-z]*" <(grep -- "-test.run" "$acc") | sort -u); do
  found=0
  for p in $pkgs; do grep -qs "^func $t(" "$p"/*_test.go && found=1; done
  [ $found = 1 ] || bad "$t, which the kernels step runs, is in none of the bundle's test packages ($pkgs)"
done

# the dry run's plan fits and keeps the order
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plan=$(bash "$acc" --dry-run --budget 540 "$tmp/out" 2>/dev/null)
total=$(echo "$plan" | sed -n 's/^estimated total: \([0-9]*\) s of 540 s$/\1/p')
[ -n "$total" ] && [ "$total" -le 540 ] || bad "the plan does not fit 540 s:"$'\n'"$plan"
order=$(echo "$plan" | awk '/^  [a-z]/{print $1}' | head -5 | paste -sd, -)
[ "$order" = "machine,kernels,versus,sampling,features" ] || bad "the plan starts $order, not machine,kernels,versus,sampling,features"
[ $fail = 0 ] && echo "gpu-plan-check: ok (plan ${total} s of 540 s: $order, ...)"
exit $fail
