// The trap zoo: every planted-bug backend of the kc_traps plugin, and what the harness
// must say about it on the shipped corpus. One X-macro row per trap, so a trap cannot be
// registered without an end-to-end expectation (traps_e2e.cpp) and vice versa:
//   KC_TRAP(name, Bug enumerator, check, diagnosis, clean case)
//     name       the backend is "trap.<name>"
//     check      the check that must report it FAILED on some corpus case
//     diagnosis  text of that check's message, `*` matching anything (the diagnosis:
//                what the harness names, not just that something differs)
//     clean case a substring of a corpus case name where the bug does not apply, so
//                the trap must PASS there (a trap misbehaves only where its bug applies)
// Each bug imitates a failure seen in a real kernel; trap_conv.cpp / trap_pool.cpp say
// which, at the one place where the trap departs from the correct code.
#pragma once

#include <atomic>
#include <cstdint>
#include <random>

// clang-format off
#define KC_TRAPS(KC_TRAP) \
  /* conv: padding and geometry */ \
  KC_TRAP(valid_for_same, kValidForSame, "shape", "eroded", \
          "conv2d padding given as one number") \
  KC_TRAP(same_pad_wrong_side, kSamePadWrongSide, "padding", \
          "y is the op with pads on the wrong side", "conv2d SAME in 16 k4 s2") \
  KC_TRAP(pad_hw_swapped, kPadHwSwapped, "padding", \
          "y is the op with H and W padding swapped", "conv2d same k3, odd kernel") \
  KC_TRAP(border_unwritten, kBorderUnwritten, "integrity", "border outputs not written", \
          "conv2d valid k3") \
  KC_TRAP(dilation_off_by_one, kDilationOffByOne, "padding", \
          "blind spot at input * lies in a window but receives no gradient", "conv2d same k3, odd kernel") \
  KC_TRAP(reflect_repeats_edge, kReflectRepeatsEdge, "padding", \
          "reflect mirrors about the edge element without repeating it", "conv2d replicate pad 1") \
  /* conv: the backward passes and the weight-share accumulation */ \
  KC_TRAP(dx_ignores_stride, kDxIgnoresStride, "adjoint", \
          "dx (backward data) is not the adjoint of the forward", "conv2d same k3, odd kernel") \
  KC_TRAP(dw_ignores_groups, kDwIgnoresGroups, "adjoint", \
          "dw (backward weight) is not the adjoint of the forward", "conv2d same k3, odd kernel") \
  KC_TRAP(dw_last_position, kDwLastPosition, "weight_share", \
          "single position (last write wins) (dw = the last output position of the last sample alone)", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(dw_mean, kDwMean, "weight_share", "mean instead of sum (dw = the oracle's / * = N*P)", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(dw_no_batch_sum, kDwNoBatchSum, "weight_share", \
          "partial sum (dw = sample 0 alone: the sum over the batch is missing)", "conv3d k3 valid on 5x5x5") \
  KC_TRAP(dw_race, kDwRace, "weight_share", "nondeterministic race (a second run gives a different dw", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(db_no_batch_sum, kDbNoBatchSum, "weight_share", \
          "partial sum (db = sample 0 alone: the sum over the batch is missing)", "conv3d k3 valid on 5x5x5") \
  KC_TRAP(low_precision_accumulation, kLowPrecisionAccumulation, "forward", \
          "y: * elements outside the tolerance", "f64 conv2d k3 pad 1") \
  KC_TRAP(truncating_conversion, kTruncatingConversion, "drift", \
          "times that of the oracle rounding every layer to nearest in * biased rounding (toward zero)", \
          "f64 conv2d k3 pad 1") \
  KC_TRAP(doubled_accumulator, kDoubledAccumulator, "forward", \
          "y: * elements outside the tolerance", "f64 conv2d k3 pad 1") \
  KC_TRAP(overflow_past_max, kOverflowPastMax, "forward", \
          "a sum below the overflow threshold * rounds to the largest value", \
          "f16 conv1d output exactly 65504, f16's largest finite value, is not inf") \
  KC_TRAP(dy_channels_last, kDyChannelsLast, "gradcheck", \
          "the gradients for the case's dy agree, the Jacobian's rows do not", \
          "conv1d single channel in and out, batch 1") \
  KC_TRAP(writes_input, kWritesInput, "integrity", "the backend wrote into its input dy during the checked run", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(db_past_end, kDbPastEnd, "integrity", \
          "db: the guard band around the buffer was overwritten: * after the last element changed", \
          "conv2d same k4 s1, even kernel puts the extra pad on hi") \
  /* conv in deep stacks */ \
  KC_TRAP(recompute_differs, kRecomputeDiffers, "checkpoint", \
          "gradients with * are not bitwise equal to those without", "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(border_gradient_dropped, kBorderGradientDropped, "influence", \
          "dropped: no gradient at all in input row 0", "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(resident_memory_leak, kResidentMemoryLeak, "checkpoint", \
          "saved no measured memory where the plan saves", "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(resident_next_layers_indices, kResidentNextLayersIndices, "backward", \
          "worst normwise error * in dx", "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(resident_checkpoint_as_workspace, kResidentCheckpointAsWorkspace, "backward", \
          "the saved input kept for its recomputation changed while it was kept", \
          "pool2d k2 s2, the classic downsampling") \
  /* max pool */ \
  KC_TRAP(pool_inference_in_training, kPoolInferenceInTraining, "argmax", \
          "was never written (still the poison value)*backward without indices was not refused", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(pool_last_tie, kPoolLastTie, "argmax", "tie rule first: the index of window * the first is at", \
          "pool2d ties, tie last, k2 s2") \
  KC_TRAP(pool_tie_mask, kPoolTieMask, "gradcheck", \
          "dx: * of * elements and groups of tied maxima disagree", "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(pool_overlap_overwrites, kPoolOverlapOverwrites, "argmax", \
          "overlapping windows overwrite instead of adding", "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(pool_atomic_dx, kPoolAtomicDx, "determinism", "dx differs between run 1 and run *", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(pool_pad_zero, kPoolPadZero, "padding", "padded positions are -inf and never selected", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(pool_ignores_nan, kPoolIgnoresNan, "argmax", "NaN rule: * a window with a NaN must give NaN", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(pool_index_minus_one, kPoolIndexMinusOne, "argmax", \
          "index -1 of window * a window of only -inf must point to one of its elements inside the input", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(pool_minus_inf_keeps_first, kPoolMinusInfKeepsFirst, "argmax", \
          "tie rule last: the index of window * points to the 1st of * elements, all -inf, of the window", \
          "pool2d ties, tie last, k2 s2") \
  KC_TRAP(pool_ceil_extra_window, kPoolCeilExtraWindow, "shape", \
          "y has shape * the contract says * with ceil_mode the next window would start at * past the input", \
          "pool1d ceil k2 s2 on 7, the extra window is kept") \
  KC_TRAP(pool_index_with_batch, kPoolIndexWithBatch, "argmax", \
          "indices are positions in the plane, not in the whole tensor", "pool1d NaN first, middle and last") \
  /* average pool */ \
  KC_TRAP(avg_count_pad_inverted, kAvgCountPadInverted, "forward", "y: * elements outside the tolerance", \
          "avgpool2d k2 s2 on 8x8, no padding") \
  KC_TRAP(avg_ceil_overhang_counted, kAvgCeilOverhangCounted, "forward", "y: * elements outside the tolerance", \
          "avgpool2d k2 s2 on 8x8, no padding") \
  KC_TRAP(avg_empty_window_nan, kAvgEmptyWindowNan, "forward", "y: * elements outside the tolerance", \
          "avgpool2d k2 s2 on 8x8, no padding") \
  KC_TRAP(avg_empty_window_unwritten, kAvgEmptyWindowUnwritten, "integrity", "y: * never written", \
          "avgpool2d k2 s2 on 8x8, no padding") \
  KC_TRAP(avg_window_off_by_one, kAvgWindowOffByOne, "forward", "y: * elements outside the tolerance", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(avg_ignores_pad_lo, kAvgIgnoresPadLo, "forward", "y: * elements outside the tolerance", \
          "avgpool2d k2 s2 on 8x8, no padding") \
  KC_TRAP(avg_divisor_ignored, kAvgDivisorIgnored, "forward", "y: * elements outside the tolerance", \
          "avgpool2d k2 s2 on 8x8, no padding") \
  KC_TRAP(avg_dx_undivided, kAvgDxUndivided, "backward", "dx: * elements outside the tolerance", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(avg_dx_kernel_divisor, kAvgDxKernelDivisor, "backward", "dx: * elements outside the tolerance", \
          "avgpool2d k2 s2 on 8x8, no padding") \
  KC_TRAP(avg_dx_race, kAvgDxRace, "determinism", "dx differs between run 1 and run *", \
          "avgpool2d k2 s2 on 8x8, no padding") \
  /* conv_bias_relu */ \
  KC_TRAP(relu_before_bias, kReluBeforeBias, "forward", "y: * elements outside the tolerance", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(relu_grad_at_zero_one, kReluGradAtZeroOne, "backward", "dx: * elements outside the tolerance", \
          "fused conv2d k3 pad 1, bias written out") \
  /* declared numerics, with an error just outside the allowance (trap_numerics.h) */ \
  KC_TRAP(winograd_ten_times, kWinogradTenTimes, "forward", "y: * elements outside the tolerance", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(ftz_flushes_normals, kFtzFlushesNormals, "forward", "y: * elements outside the tolerance", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(skip_taps_drops_real, kSkipTapsDropsReal, "forward", "y: * elements outside the tolerance", \
          "pool2d k2 s2, the classic downsampling") \
  /* blind spots: state, thresholds, 16-bit special values, zero data, written inputs (trap_blind_spots.h) */ \
  KC_TRAP(pool_stale_indices, kPoolStaleIndices, "state", "backward read state left by another call", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(relu_stale_mask, kReluStaleMask, "state", "backward read state left by another call", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(plan_ignores_batch, kPlanIgnoresBatch, "state", \
          "results depend on a call of another shape: batch * -> *, after the case: y differs", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(weights_cached_by_address, kWeightsCachedByAddress, "determinism", \
          "the backend keeps something by its buffers' addresses", "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(smaller_batch_stale_y, kSmallerBatchStaleY, "weight_share", \
          "the batch-1 run of sample * gives another y in * elements * results depend on the batch size", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(plane_index_15_bits, kPlaneIndex15Bits, "forward", "y: * elements outside the tolerance", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(batch_tail_dropped, kBatchTailDropped, "forward", "y: * elements outside the tolerance", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(channel_tile_tail, kChannelTileTail, "forward", "y: * elements outside the tolerance", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(out_channel_tile_tail, kOutChannelTileTail, "backward", "dw: * elements outside the tolerance", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(extent_tile_tail, kExtentTileTail, "integrity", "never written", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(pool_window_u8_offset, kPoolWindowU8Offset, "argmax", "*", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(bf16_nan_to_inf, kBf16NanToInf, "forward", "NaN became ±inf", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(f16_inf_saturates, kF16InfSaturates, "forward", "±inf became ±65504, the largest finite f16 value: a saturating store", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(zero_sample_skipped, kZeroSampleSkipped, "integrity", "y: * never written", \
          "pool2d k2 s2, the classic downsampling") \
  KC_TRAP(zero_dy_early_return, kZeroDyEarlyReturn, "integrity", "dx: * never written", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(writes_weights, kWritesWeights, "weight_share", "the backend wrote into its input w", \
          "pool2d k2 s2, the classic downsampling") \
  /* narrow index arithmetic, caught by the boundary sweeps (trap_index_width.h) */ \
  KC_TRAP(batch_index_7_bits, kBatchIndex7Bits, "forward", "y: * elements outside the tolerance", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(channel_index_8_bits, kChannelIndex8Bits, "forward", "y: * elements outside the tolerance", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(output_index_16_bits, kOutputIndex16Bits, "integrity", "y: * never written", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(gemm_m_rows_int16, kGemmMRowsInt16, "backward", "dw: * elements outside the tolerance", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(dw_out_channel_7_bits, kDwOutChannel7Bits, "backward", "dw: * elements outside the tolerance", \
          "conv2d same k3, odd kernel") \
  KC_TRAP(avg_divisor_u8, kAvgDivisorU8, "forward", "y: * elements outside the tolerance", \
          "avgpool2d k2 s2 on 8x8, no padding")
// clang-format on

namespace kc::traps {

// The planted bug of a trap backend; kNone is the control (trap.none), the same code
// with no bug, which must pass the whole corpus.
enum class Bug {
  kNone,
#define KC_TRAP_ENUM(name, bug, check, diagnosis, clean) bug,
  KC_TRAPS(KC_TRAP_ENUM)
#undef KC_TRAP_ENUM
};

// The racing traps' thread order: a different number on every call (so that two runs
// really differ), from a random start per process.
inline uint64_t race_call() {
  static std::atomic<uint64_t> calls{std::random_device{}()};
  return calls.fetch_add(1);
}

}  // namespace kc::traps
