// cuda_batch_camellia_sbox.cu: the CUDA batch executor's kernels over camellia_sbox_smem32, the
// backend's default Camellia, in a unit of their own: the variant's table layout is chosen by
// macros before camellia.h is first included (camellia_sbox_smem32.cuh), so it cannot share
// cuda_batch.cu, whose Camellia family uses the four SP tables. With this unit the batch and the
// bulk kernels pick the same Camellia by default.
//
// NOT constant-time: the family's table lookups depend on secret bytes (camellia_sbox_smem32.cuh).
// Keys are expanded by cuda_batch.cu's unit with the SP tables (this layout compiles no key
// schedule); the schedule itself does not depend on the table layout.
#include "backends/cuda/camellia_sbox_smem32.cuh"  // first: its table layout
#include "backends/cuda/cuda_batch_kernels.cuh"

namespace gpucrypt::cuda::batch {

namespace {

template <int kKeyBits>
struct CamelliaSboxBatch : CamelliaSboxSmem32<kKeyBits> {
  static void launch_expand(const ExpandParams& params, int grid, cudaStream_t stream) {
    expand_camellia_keys(params, grid, stream);
  }
};

}  // namespace

FamilyOps camellia_sbox_smem32_ops(int key_bits) {
  return ops_for_key_bits<CamelliaSboxBatch>(key_bits, "camellia_sbox_smem32");
}

}  // namespace gpucrypt::cuda::batch
