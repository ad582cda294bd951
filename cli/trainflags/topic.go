package trainflags

import "github.com/spf13/cobra"

// NewHelpTopic returns `gnnscope help flags`: the experiment flags in
// detail, where their --help says each in one clause.
func NewHelpTopic() *cobra.Command {
	return &cobra.Command{Use: "flags", Short: "The experiment flags of train and run in detail", Long: flagsHelp}
}

// flagsHelp is the flags topic.
const flagsHelp = `The experiment flags that 'gnnscope train' and 'gnnscope run' share, where
their --help says more than one clause. Spec files take the same settings
as [train] keys.

Model and training
  --layers N       appnp: the propagation steps K (default 10); gcnii: the
                   GCN2Conv layers (default 64)
  --patience N     epochs without a better epoch by --select before the run
                   stops (0 = never; gcnii: 100 by default)
  --select WHAT    the epoch whose test accuracy is reported and that
                   --patience counts from: val-acc (highest validation
                   accuracy) or val-loss (lowest validation cross-entropy,
                   as the GCNII paper does)
  --weight-decay   L2 weight decay on weights, not biases; with --wd-conv,
                   on the dense layers only
  --wd-conv        L2 weight decay on the message-passing layers' weights,
                   --weight-decay then covering the dense ones (gcnii: 0.01
                   on its convolutions, 5e-4 on its linears by default)
  --wd-out         L2 weight decay on the output layer's weights, overriding
                   --weight-decay and --wd-conv there (GNNAutoScale's Cora
                   settings: 0)
  --clip-norm X    each step's gradients are scaled to a global L2 norm of
                   at most X (0 = no clipping; GNNAutoScale's grad_norm)
  --theta X        gcnii: lambda of the identity mapping,
                   beta_l = ln(lambda/l + 1)

Batches
  --features LIST  comma-separated (e.g. row,uva): normalization auto (row
                   if all values are non-negative; the default), row or
                   none; and on a GPU the feature store: device (all in GPU
                   memory), uva (mapped pinned host memory the GPU gathers
                   from) or host (gathered on the host, then copied).
                   Without a store, cuda chooses device when the matrix
                   takes at most half the memory left beside the model,
                   else uva (run_start records it)
  --sampler WHAT   full (the whole graph every step), neighbor (sampled
                   mini-batches) or gas (GNNAutoScale: graph parts plus the
                   historical embeddings of their halo); default full for
                   gcn, neighbor for sage
  --part-balance   gas: what the parts balance: nodes (the default, as
                   METIS and GNNAutoScale) or edges (each node weighs its
                   degree + 1: even edge volumes, so batch memory varies
                   less)
  --eval-chunk N   most destination nodes per block in layer-wise inference;
                   0 = automatic: the largest block whose predicted peak
                   fits --mem-budget, or a quarter of the memory available;
                   on the CPU at most 131072 destinations

Memory
  --mem-budget     device memory budget: bytes, or 512MiB, 2GiB, 0.1G
                   (0 = unlimited); allocations past it fail with an
                   out-of-memory error
  --on-oom WHAT    what a batch that runs out of memory does: abort (the run
                   ends with status oom) or skip (record it and go on)
  --mem-guard WHAT every batch is kept under --mem-budget by predicting its
                   peak before it runs; one predicted not to fit is drawn
                   again (resample), split in parts (split) or has edges
                   cut (cut); off by default
  --cache-bytes    the device feature cache: this much of the feature matrix
                   stays resident on the device (a size such as 0.1G or
                   512MiB, or a share of the rows such as 20%; 0 = none), so
                   that a training batch moves only the rows it misses from
                   host memory; it counts against --mem-budget and needs
                   --sampler neighbor or gas
  --cache-policy   the rows --cache-bytes keeps: degree (the highest-degree
                   nodes; the default) or frequency (those a pre-sampling
                   pass over one epoch's batches touched most; --sampler
                   neighbor)

Inference cutting
  --cut-rule WHAT  the edges the guard's cut and inference cutting drop
                   first: random, degree-sum, degree-product or degree-cap
                   (trim the longest neighbor lists first)
  --eval-cut X     drop this fraction of every inference block's edges by
                   --cut-rule (0 = none); without --mem-budget the selected
                   weights are also evaluated uncut after training
                   (test_acc_uncut), so one run shows what the cut costs
  --cut-min-keep N neighbors every node keeps from an inference cut while
                   other edges are left; 0 = automatic: with --eval-cut the
                   largest floor that leaves enough edges to cut, else half
                   the mean degree; -1 = none
  --cut-norm WHAT  edge weights of cut inference blocks for gcn, appnp and
                   gcnii: renorm (the cut graph's own degrees), scale
                   (full-graph weights scaled by d/k, as a sampled row) or
                   keep (full-graph weights)

Device
  --device WHAT    cpu, cuda or cuda:N (GPU N); cuda needs a binary built
                   with -tags cuda
  --async-transfer cuda: batch i+1's features are copied on a copy stream
                   while batch i computes (events order them); no effect on
                   cpu
  --sampler-device where neighbor sampling draws: cpu (the default), or
                   cuda (a GPU kernel over the graph kept in GPU memory, or
                   in mapped pinned host memory when it does not fit; needs
                   --device cuda)
  --gemm WHAT      cuda: the matrix product: auto (cuBLAS where found, else
                   the own kernel), cublas (required) or own; no effect on
                   cpu`
