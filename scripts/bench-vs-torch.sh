#!/usr/bin/env bash
# gnnscope side by side with PyTorch on this machine, in one run, interleaved
# (gnnscope, torch, gnnscope, torch, ...), and the ratios of the medians.
#
#   kernels   `gnnscope bench --only peak,gemm,gather --json` against
#             scripts/bench-torch-kernels.py at 1 and all threads: every
#             torch product path per shape (torch.mm, torch.addmm and
#             torch.matmul with out= on the BLAS torch loads, oneDNN's inner
#             product; with --torch-blas DIR the BLAS paths once more on that
#             BLAS, named "@DIR"), index_select(out=) for the gather. Each
#             torch figure's threads are checked (CPU over wall time of its
#             loop, scripts/benchthreads.py: refused above 1.15x the threads
#             given, or below 0.6x above one thread). The table names every
#             path's rate, the fastest unrefused one, gnnscope's rate, rates
#             per CPU-second of both, the ratio gnnscope / fastest (of the
#             medians, and paired: the median of each repeat's own ratio)
#             and each product's share of the FMA peak `gnnscope bench`
#             measured. Within a repeat the two sides alternate product by
#             product (and the gather), so that each pair meets the same
#             state of the host.
#   train     per dataset, one `gnnscope train --model sage --epochs 1 --json`
#             against scripts/torch-sage-reference.py with the same flags on the
#             same data (`gnnscope datasets export`): the sampled training epoch
#             and the full layer-wise evaluation over all nodes, each side's
#             own timers around the same work (gnnscope: the epoch's train_s
#             and eval_s of --history; its epoch_s includes the evaluation,
#             torch: time.perf_counter around each loop); peak RSS
#             of each process from /usr/bin/time -v. Ratio = torch's time /
#             gnnscope's (above 1: gnnscope is faster).
#
# Models: synth-small and synth-medium train `train`'s GraphSAGE (2 layers of
# 64, fanouts 25,10) with batches of 1024 ($SAGE_ARGS); synth-products the
# GraphSAGE 3x256 with fanouts 15,10,5 and batches of 1024 of
# scripts/pyg-compare.py ($PRODUCTS_ARGS). Both sides use the same threads
# (--threads, default all cores).
#
# Torch's environment, for the kernels and the train/eval runs alike (the
# torch command alone): OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS,
# OMP_NUM_THREADS and MKL_NUM_THREADS set to the thread count (OpenBLAS
# otherwise runs its own pool of all cores whatever torch.set_num_threads
# says), and OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (processor
# overrides that older OpenBLAS builds need on some processors and that slow
# a current one down). The header prints the environment torch ran with.
#
# Time and memory: synth-products is 2.4M nodes x 100 features (a 1.2 GB
# export in the work folder). Its runs peaked at about 10 GiB resident
# (gnnscope) and 8.3 GiB (torch), one process at a time; gnnscope's epoch
# and evaluation took 10 to 19 minutes on the loaded 2-core machine, torch's
# training epoch did not finish within 36 minutes there (a run of its
# evaluation alone, --epochs 0, took 2.3). So synth-products runs
# --products-repeats times (default 1) while the other sections run
# --repeats times (default 3), and --torch-products-epochs 0 has torch only
# evaluate there (no training ratio; the evaluation and memory still).
# Progress goes to stderr, the tables to stdout.
#
# Torch's BLAS: Debian's python3-torch multiplies with whatever
# libblas.so.3 the system selects. With only libblas3 installed that is the
# netlib reference BLAS (a few GFLOP/s), and every ratio is meaningless: the
# header prints the library torch loaded and warns. Install
# libopenblas0-pthread, or point --torch-blas at a folder that holds
# OpenBLAS's libblas.so.3 (it goes first on torch's LD_LIBRARY_PATH).
#
# Usage: scripts/bench-vs-torch.sh [flags]
#   --repeats N           interleaved repeats of kernels, synth-small, synth-medium (3)
#   --products-repeats N  repeats of synth-products (1)
#   --torch-products-epochs N  torch's training epochs on synth-products (1; 0:
#                         evaluate the initial weights only)
#   --threads T           threads of the train/eval runs (all cores: nproc)
#   --kernel-threads L    thread counts of the kernels (1,T)
#   --min-time S          kernels: minimum seconds per figure (1)
#   --torch-gemm LIST     torch's product paths (mm,addmm,matmul,onednn: all)
#   --gemm-shapes LIST    kernels: the products, MxKxN[:tA|:tB] (gnnscope bench's default)
#   --kernels LIST        kernels: gemm,gather (both)
#   --only LIST           sections: kernels,train (both)
#   --data LIST           datasets of the train section (synth-small,synth-medium,synth-products)
#   --quick               synth-small only, one repeat, no kernels: a smoke test
#   --workdir DIR         keep the exports and every run's output there (default: a
#                         temporary folder, removed at the end)
#   --torch-blas DIR      a folder with the libblas.so.3 torch should load
# Environment: GNNSCOPE (a built binary; default: go build of this tree),
# PYTHON (default /usr/bin/python3, Debian's, which has python3-torch),
# SAGE_ARGS, PRODUCTS_ARGS (the model flags, as above).
set -euo pipefail
cd "$(dirname "$0")/.."

repeats=3 products_repeats=1 torch_products_epochs=1 threads=$(nproc) kthreads="" min_time=1
only=kernels,train data=synth-small,synth-medium,synth-products workdir="" torch_blas="" torch_gemm=mm,addmm,matmul,onednn
gemm_shapes="" kernel_kinds=gemm,gather
SAGE_ARGS=${SAGE_ARGS:---layers 2 --hidden 64 --fanout 25,10 --batch-size 1024}
PRODUCTS_ARGS=${PRODUCTS_ARGS:---layers 3 --hidden 256 --fanout 15,10,5 --batch-size 1024}
PYTHON=${PYTHON:-/usr/bin/python3}

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "bench-vs-torch: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--repeats) repeats=$2; shift ;;
	--products-repeats) products_repeats=$2; shift ;;
	--torch-products-epochs) torch_products_epochs=$2; shift ;;
	--threads) threads=$2; shift ;;
	--kernel-threads) kthreads=$2; shift ;;
	--min-time) min_time=$2; shift ;;
	--torch-gemm) torch_gemm=$2; shift ;;
	--gemm-shapes) gemm_shapes=$2; shift ;;
	--kernels) kernel_kinds=$2; shift ;;
	--only) only=$2; shift ;;
	--data) data=$2; shift ;;
	--quick) only=train data=synth-small repeats=1 ;;
	--workdir) workdir=$2; shift ;;
	--torch-blas) torch_blas=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument $1" ;;
	esac
	shift
done
case $repeats$products_repeats$torch_products_epochs$threads in
*[!0-9]*) die "--repeats, --products-repeats, --torch-products-epochs and --threads take numbers" ;;
esac
[ -n "$kthreads" ] || kthreads="1,$threads"
[ "$kthreads" = "1,1" ] && kthreads=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$workdir" ]; then workdir=$tmp/work; fi
mkdir -p "$workdir"
out=$workdir/runs-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"

log() { echo "[$(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)] $*" >&2; }

"$PYTHON" -c 'import numpy, torch' 2>/dev/null ||
	die "$PYTHON cannot import numpy and torch (Debian: apt-get install python3-torch; or set PYTHON)"
bin=${GNNSCOPE:-}
if [ -z "$bin" ]; then
	log "building gnnscope"
	go build -o "$tmp/gnnscope" . || die "go build failed"
	bin=$tmp/gnnscope
fi

# torch_prefix T [BLAS] sets tp to the command prefix that runs torch with T
# threads (every BLAS's thread variable set, the processor overrides unset)
# and, with BLAS (default --torch-blas; "-" for none), that folder first on
# the library path
torch_prefix() {
	local blasdir=${2-$torch_blas}
	[ "$blasdir" = - ] && blasdir=""
	tp=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS="$1" OPENBLAS_NUM_THREADS="$1"
		GOTO_NUM_THREADS="$1" MKL_NUM_THREADS="$1")
	if [ -n "$blasdir" ]; then
		tp+=(LD_LIBRARY_PATH="$blasdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
	fi
}

# timed CMD...: runs CMD, its stdout to $1.json and /usr/bin/time -v's
# report to $1.time (when /usr/bin/time exists), the load before it to $1.load
timed() {
	local base=$1
	shift
	cut -d' ' -f1-3 /proc/loadavg >"$base.load"
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -v -o "$base.time" "$@" >"$base.json"
	else
		"$@" >"$base.json"
	fi
}

torch_prefix 1
blas=$("${tp[@]}" "$PYTHON" -c '
import torch
torch.mm(torch.ones(8, 8), torch.ones(8, 8))
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "blas" in l.lower() and ".so" in l})
print(torch.__version__, " ".join(libs) or "(no BLAS library mapped)")')
{
	echo "# gnnscope against PyTorch, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "threads: $threads for train/eval (both sides), kernels at $kthreads"
	echo "torch: $blas"
	echo "torch environment: ${tp[*]:1} (thread count set per run)"
	echo "overrides in this shell (unset for torch): OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-unset}"
	echo "repeats: $repeats (synth-products: $products_repeats), interleaved gnnscope, torch, ..."
	echo "outputs: $out"
} >"$out/header.txt"
cat "$out/header.txt" >&2
case $blas in
*/blas/libblas.so* | *libblas.so.3.*)
	echo "WARNING: torch uses the netlib reference BLAS: its matrix products run at a few GFLOP/s and the ratios mean nothing. Install libopenblas0-pthread or pass --torch-blas DIR." | tee -a "$out/header.txt" >&2
	;;
esac

# The kernels' default products: gnnscope bench's and bench-torch-kernels.py's.
default_shapes=100000x256x256,256x100000x256:tA,100000x256x256:tB,100000x602x256,602x100000x256:tA,100000x100x256,100000x256x64,1024x100x256

# kernel_pair T R S ITEM: one kernel item (a product MxKxN[:tA|:tB], or
# "gather") by gnnscope, then by torch, then by torch on --torch-blas, into
# kernels-{gnnscope,torch}-tT-rR-sS[-blas].json. Each item runs on its own
# right after the other side's, so that both meet the same state of a
# shared host: on a virtual machine the rate of one side alone drifts by a
# fifth within minutes, whatever the load inside the guest says.
kernel_pair() {
	local t=$1 r=$2 s=$3 item=$4 kscript=scripts/bench-torch-kernels.py gflag=() tflag=() only
	if [ "$item" = gather ]; then
		only=gather
	else
		only=gemm gflag=(--gemm-shapes "$item") tflag=(--gemm-shapes "$item")
	fi
	# The FMA peak with every product (and the first item), so that each
	# product's share is of the peak measured seconds before it.
	if [ "$only" = gemm ] || [ "$s" = 1 ]; then gflag+=(--only "peak,$only"); else gflag+=(--only "$only"); fi
	log "kernels, $t threads, repeat $r/$repeats, $item: gnnscope"
	timed "$out/kernels-gnnscope-t$t-r$r-s$s" "$bin" bench "${gflag[@]}" --json --threads "$t" --min-time "${min_time}s" ||
		die "gnnscope bench failed"
	[ $have = 1 ] || return 0
	log "kernels, $t threads, repeat $r/$repeats, $item: torch"
	torch_prefix "$t" -
	if ! timed "$out/kernels-torch-t$t-r$r-s$s" "${tp[@]}" "$PYTHON" "$kscript" --only "$only" "${tflag[@]}" --gemm "$torch_gemm" --threads "$t" --min-time "$min_time"; then
		echo "kernels: $kscript failed; torch side skipped" | tee -a "$out/header.txt" >&2
		rm -f "$out"/kernels-torch-*
		have=0
		return 0
	fi
	[ -n "$torch_blas" ] || return 0
	[ "$only" = gemm ] && [ -n "${torch_gemm//onednn/}" ] || return 0
	log "kernels, $t threads, repeat $r/$repeats, $item: torch on $torch_blas"
	torch_prefix "$t"
	timed "$out/kernels-torch-t$t-r$r-s$s-blas" "${tp[@]}" "$PYTHON" "$kscript" --only gemm "${tflag[@]}" \
		--gemm "${torch_gemm//onednn/}" --label "$torch_blas" --threads "$t" --min-time "$min_time" ||
		echo "kernels: $kscript on $torch_blas failed (repeat $r, $t threads)" | tee -a "$out/header.txt" >&2
}

kernels() {
	local t r s item items=()
	have=1
	if [ ! -f scripts/bench-torch-kernels.py ]; then
		echo "kernels: scripts/bench-torch-kernels.py is missing: gnnscope's figures only, no torch side" | tee -a "$out/header.txt" >&2
		have=0
	fi
	case ,$kernel_kinds, in *,gemm,*) IFS=, read -r -a items <<<"${gemm_shapes:-$default_shapes}" ;; esac
	case ,$kernel_kinds, in *,gather,*) items+=(gather) ;; esac
	for t in ${kthreads//,/ }; do
		for r in $(seq "$repeats"); do
			s=0
			for item in "${items[@]}"; do
				s=$((s + 1))
				kernel_pair "$t" "$r" "$s" "$item"
			done
		done
	done
}

train() {
	local ds args n r npz base tepochs
	for ds in ${data//,/ }; do
		args=$SAGE_ARGS n=$repeats tepochs=1
		if [ "$ds" = synth-products ]; then
			args=$PRODUCTS_ARGS n=$products_repeats tepochs=$torch_products_epochs
		fi
		npz=$workdir/$ds.npz
		if [ ! -s "$npz" ]; then
			log "$ds: generating (cached for later runs) and exporting to $npz"
			"$bin" datasets export "$ds" -o "$npz" -q || die "export of $ds failed"
		fi
		echo "$ds: $args" >>"$out/header.txt"
		for r in $(seq "$n"); do
			base=$out/train-$ds-r$r
			log "$ds repeat $r/$n: gnnscope train $args --epochs 1 --threads $threads --seed $r"
			# shellcheck disable=SC2086 # the model flags are words
			timed "$base-gnnscope" "$bin" train --data "$ds" --model sage --sampler neighbor $args \
				--epochs 1 --threads "$threads" --seed "$r" --json --history -q || die "gnnscope train on $ds failed"
			log "$ds repeat $r/$n: torch reference, $tepochs epochs"
			# shellcheck disable=SC2086
			torch_prefix "$threads"
			timed "$base-torch" "${tp[@]}" "$PYTHON" scripts/torch-sage-reference.py "$npz" $args \
				--epochs "$tepochs" --threads "$threads" --seed "$r" || die "torch reference on $ds failed"
		done
	done
}

case ,$only, in *,kernels,*) kernels ;; esac
case ,$only, in *,train,*) train ;; esac
log "done"
"$PYTHON" scripts/bench-vs-torch-summary.py "$out"
