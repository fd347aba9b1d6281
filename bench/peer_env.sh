# Sourced by the bench scripts that run PyTorch beside trellis: makes the
# peer use the same instruction set as trellis, and its best kernels for it.
#
# OpenBLAS picks its kernels from the CPU model, and on virtual machines
# whose CPUID hides the model ("Intel(R) Xeon(R) Processor") it falls back
# to its Prescott (SSE3) kernels: measured on such a machine, 22 GFLOP/s on
# Sgemm 512³ instead of 124 with its SkylakeX kernels, which would flatter
# trellis 5×. So the core type is set from the CPU flags unless the caller
# set OPENBLAS_CORETYPE. With TRELLIS_CPU=avx2 (trellis without AVX-512),
# the peer is capped the same way: OpenBLAS's Haswell kernels, oneDNN and
# ATen at AVX2.
#
# Sets py, the interpreter with Debian's PyTorch, and stops the script with
# what to install when it has none. Prints one line saying what it chose
# (peer_env_note).
py=/usr/bin/python3
if ! "$py" -c 'import torch' 2>/dev/null; then
	echo "PyTorch not found for $py: apt-get install python3-torch libopenblas0-pthread" >&2
	exit 1
fi
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n')
has() { grep -qx "$1" <<<"$flags"; }
peer_env_note=""
if [ "${TRELLIS_CPU:-}" = avx2 ]; then
	export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell} ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2
	peer_env_note="peer capped to AVX2 like trellis: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2"
elif [ -n "${OPENBLAS_CORETYPE:-}" ]; then
	peer_env_note="OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE (set by the caller)"
else
	detected=$(OPENBLAS_VERBOSE=2 OPENBLAS_NUM_THREADS=1 "$py" -c 'import torch; torch.ones(2, 2) @ torch.ones(2, 2)' 2>&1 | awk '/^Core:/ { print $2 }' || true)
	if has avx512f && has avx512bw && has avx512vl; then
		want=SkylakeX
	elif has avx2 && has fma; then
		want=Haswell
	else
		want=""
	fi
	case "$detected" in
	SkylakeX | Cooperlake | SapphireRapids | Haswell | Zen) peer_env_note="OpenBLAS core $detected (its own choice)" ;;
	*)
		if [ -n "$want" ]; then
			export OPENBLAS_CORETYPE=$want
			peer_env_note="OpenBLAS chose ${detected:-unknown} kernels for this CPU; set OPENBLAS_CORETYPE=$want from its flags (set it yourself to override)"
		else
			peer_env_note="OpenBLAS core ${detected:-unknown}"
		fi
		;;
	esac
fi
