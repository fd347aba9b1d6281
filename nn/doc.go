// Package nn holds the learning core: float32 models whose parameters live
// in one contiguous vector, their layers, heads and losses, optimizers, and
// the training and evaluation loops every node runs each round.
//
// # Layout
//
// A Model is a sequence of layers. All trainable parameters are one flat
// []float32 (Params) and all gradients another (Grads); each layer holds
// views into them, in layer order, weights before biases, each weight in
// PyTorch's layout (linear [out, in], conv [out, in, k, k]). Strategies
// aggregate Params directly. Batch-norm running statistics are node-local
// State, outside the flat vector, never shared or aggregated (the DMTT paper).
//
// # Choices
//
//   - Initialization follows PyTorch's defaults (uniform ±1/sqrt(fan_in) for
//     linear and conv weights and biases; batch norm gamma 1, beta 0), drawn
//     from a seed, so every node of an experiment can start alike.
//   - Convolutions are im2col + GEMM one sample at a time: a sample's column
//     buffer stays in cache; backward rebuilds it rather than storing the
//     batch's columns (memory over a few percent of compute). Stride-1
//     convolutions use the wide layout (convwide.go: the input padded once,
//     each column row one contiguous run of it, at the cost of computing
//     P − Wo extra columns per output row, P the row pitch), and their
//     products read those runs in place (gemm.SgemmGathered forward and,
//     with AVX2 or AVX-512, gemm.SgemmGatheredNT for the weight gradient,
//     summed transposed over a chunk of samples and transposed once):
//     no column matrix is built. The weights are packed once per pass
//     (gemm.PackA), not once per sample. With several
//     matrix threads, the batch's samples are split across them (a run of
//     samples each); weight gradients are summed in 4 fixed chunks of the
//     batch, so the bits do not depend on the thread count. Linear and conv
//     layers overwrite their gradients rather than adding to zeroed ones.
//   - Stride-1 5×5 convolutions with at least 16 input and 16 output
//     channels (the FEMNIST CNN's second) compute with Winograd's minimal
//     filtering F(4×4, 5×5) instead (convwino.go; Lavin and Gray, CVPR
//     2016): 64 products of Cout × Cin × tiles per group of 8 samples,
//     6.25× fewer multiply-adds than direct convolution (4.8× on a 14×14
//     output), in forward and in both backward passes (the exact gradient
//     of the Winograd computation). The 8 samples of a group sit in the
//     lanes of the AVX2 transforms; with AVX-512 two tiles go through one
//     16-lane transform (but the input gradient's, whose patches overlap),
//     with the AVX2 kernels' operations lane for lane (same bits, tested).
//     The filter transforms take 8 input channels a vector. The rounding
//     differs from direct convolution's: errors up to about 6e-6 of the
//     result's scale against float64, 10–30× the direct path's (tested),
//     as with any Winograd implementation (F(2×2, 5×5), which this
//     replaced, had up to the same 6e-6 for 2.78× fewer multiply-adds).
//     Layers with fewer channels (the first layer of a CNN, LeNet-5's)
//     stay direct: there the transforms would cost more than they save.
//   - Plain SGD (no momentum, weight decay, proximal term or clipping)
//     is fused into large linear layers' weight-gradient products: Step
//     leaves dW uncomputed and, once every layer's gradient is known to be
//     finite, updates W ← W − lr·dyᵀx with one product (beta = 1), so W
//     is read and written once instead of dW being written and W and dW
//     read again (linear.applyDeferred). That needs the layer's gradient
//     finite by a bound on x and dy, a batch of at most 256 (one k block)
//     and W's range on multiples of 8, and rounds as the unfused step does
//     (same bits, tested); the portable kernels do not fuse. The FEMNIST
//     CNN's 8-node, 5-round run took 7 % less time, and the fused layers'
//     gradient pages are never touched.
//   - A max-pool that follows a ReLU is built before it (ReLU → pool
//     becomes pool → ReLU): max commutes with the non-decreasing ReLU, so
//     outputs and gradients are the same bits (tested against the paper's
//     order), and the ReLU runs on a quarter of the values for a 2×2 pool.
//     The pool applies it to its outputs and masks their gradients itself
//     (the ReLU layer stays in the stack and passes both through), so the
//     ReLU makes no pass of its own over the batch. Both are
//     parameterless, so parameter layout and tensor names do not change;
//     Describe shows the order that runs. A 2×2 pool right after a
//     convolution runs inside the convolution's forward, on each sample
//     (each Winograd group of 8) as soon as its output is written, while
//     it is in cache (conv2d.poolOutputs), and its own forward only
//     returns the outputs.
//   - A stride-1 convolution (not Winograd) followed by a 2×2 max-pool
//     leaves its output at the wide layout's row pitch P: the pool reads
//     it in place and returns its input gradient at that pitch, with
//     zeros in the extra columns, which the convolution's backward takes
//     as it is (conv2d.outPitch). DP-SGD copies it to the plain layout for
//     its per-sample products.
//   - When that convolution is the model's first (no input gradient), the
//     pool hands back its own gradient, one value per window, and the
//     convolution sums its weight gradient over the windows' winners only
//     (poolgrad.go: 4× fewer multiply-adds, no scatter into a dense
//     gradient, an AVX2 kernel for 5×5 windows). The same terms as the
//     dense product's in another order, so the bits differ from it by
//     rounding (tested against it); DP-SGD, whose per-sample norms need
//     the dense gradient, keeps the dense path.
//   - Optimizers flush moment estimates that fall below the smallest normal
//     float32 to 0 (flushDenormal): on x86 a subnormal costs a microcode
//     assist (23× slower per element, measured), and such a moment cannot
//     move any weight larger than about 2⁻¹⁰⁰.
//   - Batch norm: eps 1e-5, momentum 0.1, unbiased running variance, as
//     PyTorch. Dropout is inverted dropout with masks from the caller's RNG.
//   - The evidential head implements the MSE form of Sensoy et al. with the
//     variance term (switchable) and the annealed KL of the DMTT paper.
//   - A non-finite loss or gradient stops training with an error naming the
//     layer; nothing continues silently on NaN. A linear layer's gradients
//     are proven finite from a bound on its input and output gradient
//     (finite, and batch·max|dy|·max(max|x|, 1) below half the largest
//     float32) instead of read back, when those are the smaller; otherwise,
//     and whenever the bound fails, they are read.
//
// # Memory
//
// A model holds exactly: parameters and gradients (2P float32), state (S),
// an input batch (B·D float32 + B int labels), the logit gradient (B·K),
// and per layer, for batch size B:
//
//	linear:     B·out (output) + B·in (input gradient)
//	conv2d:     B·Cout·Ho·Wo + B·Cin·H·W + 2·(Cin·k²)·W' (one sample's columns and their gradient)
//	            + Cout·Cin·k² + Cout (one gradient chunk); W' = Ho·Wo, or for
//	            stride 1 Ho·P (P = max(W + pad, Wo)) plus 2·(Cin·((H + 2·pad)·P + pad) + k − 1)
//	            (padded input and its gradient) and 2·Cout·Ho·P (wide output and its gradient),
//	            or, when a 2×2 max-pool reads the output at the pitch, B·Cout·Ho·P as
//	            the output instead of B·Cout·Ho·Wo and no wide output and gradient
//	            (each extra matrix thread: another set of these per-sample buffers;
//	            the columns are allocated but not used by stride-1 layers with
//	            AVX2 or AVX-512 outside DP-SGD)
//	  Winograd: B·Cout·Ho·Wo + B·Cin·H·W + 2·(Cin·k²)·Ho·P (output, input gradient,
//	            DP-SGD's columns) + 3·64·(Cout·Cin + 16) + Cout (U, the dU sum, one
//	            chunk's dU and db) and per matrix thread, for N = ⌈Ho/4⌉·⌈Wo/4⌉ tiles
//	            and T = min(8, N)·8 columns a block: 2·Cin·Hp·Wp·8 (padded inputs and
//	            their gradient, Hp = 4⌈Ho/4⌉ + 4, Wp likewise) + 2·64·(Cin·T + 16) (V, dV)
//	            + 64·(Cout·T + 16) (M) + 16·Cout·N·8 (outputs in lanes)
//	            + 8·max(H·W, Ho·Wo) (one plane with the samples interleaved)
//	maxpool2d:  2·B·C·Ho·Wo (output, winning index as int32) + B·C·H·P' (input
//	            gradient; P' = W, or the convolution's pitch P before it; after
//	            a first convolution only DP-SGD writes it, so outside DP-SGD
//	            its pages are never touched)
//	relu:       2·B·size (nothing when the max-pool before it applies it)
//	dropout:    3·B·size (mask, output, input gradient)
//	batchnorm:  3·B·size (normalized input, output, input gradient) + C
//	flatten:    nothing
//
// The first layer keeps no input gradient. Optimizer state is the
// optimizer's: SGD with momentum P, Adam and AdamW 2P.
//
// Of this, only the parameters and the state persist from one pass to
// the next; the rest (gradients, buffers, input batch, logit gradient,
// and the matrix engine with its packing workspace) is a scratch. A model
// built with a Pool (Options.Pool) holds the parameters and state only
// and takes a scratch from the pool while it computes: its own layers are
// metadata bound to the parameters and state, and taking a scratch binds
// the scratch's layers to them (slice headers only) and swaps the
// model's layers, gradients, buffers and engine for the scratch's, so
// the computing code is the same for pooled and unpooled models. A
// simulation of many nodes then keeps one scratch per node computing at
// once (Footprint.PerModel per model, Footprint.Scratch per scratch):
// 10,000 MNIST MLPs (784→128→10, batch 32) hold 400 KiB each instead of
// 1.15 MiB. Results are the same bits: no pass reads a scratch buffer
// before writing it, which the tests check by poisoning a scratch with NaN
// between models.
//
// Spec.Footprint counts all of this without building the model (each
// layer's footprint method, next to its alloc), in heap bytes rounded per
// allocation as the Go allocator does, with the matrix engine's packing
// buffers for a training step (gemm.Workspace) and what DP-SGD adds; the
// memory estimate of a run asks it (TestFootprintMatchesTheHeap holds it
// to what the runtime really allocates).
package nn
