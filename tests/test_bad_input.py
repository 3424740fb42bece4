"""Every public numeric function of the arithmetic rejects bad numbers with a ValueError that
names the parameter.

``VALID`` holds one set of valid keyword arguments per public function (defined in ``units``,
``roofline``, ``generation``, ``kvcache``, ``models`` or ``hardware``) that takes a number. Each
numeric parameter in turn is replaced by zero, a negative number, NaN, infinity, an absurdly
large number, a boolean, a string and None; each must raise ValueError whose message contains
the parameter's name as a word. ``test_every_public_numeric_function_is_in_the_table`` fails
when a new public numeric function, or a new parameter of one, appears without an entry here.
"""
from __future__ import annotations

import importlib
import inspect
import math
import re

import pytest

from inferlimits.arithmetic.activations import layer_kernels
from inferlimits.data.hardware import accelerator
from inferlimits.arithmetic.precision import decode_on
from inferlimits.checks import worked_example
from inferlimits.data.models import model

#: short name (as in VALID's keys) -> module
MODULES = {"units": "inferlimits.data.units", "roofline": "inferlimits.arithmetic.roofline", "activations": "inferlimits.arithmetic.activations", "generation": "inferlimits.arithmetic.generation", "kvcache": "inferlimits.arithmetic.kvcache", "models": "inferlimits.data.models", "hardware": "inferlimits.data.hardware", "economics": "inferlimits.arithmetic.economics", "overhead": "inferlimits.arithmetic.overhead", "indexcard": "inferlimits.arithmetic.indexcard", "worked_example": "inferlimits.checks.worked_example", "precision": "inferlimits.arithmetic.precision", "parallel": "inferlimits.arithmetic.parallel", "speculative": "inferlimits.arithmetic.speculative", "serving": "inferlimits.arithmetic.serving"}

LLAMA = model("Llama-3.1-8B").config
MISTRAL = model("Mistral-7B-v0.1").config
DEEPSEEK = model("DeepSeek-V3").config  # an MoE model, so ``layer`` actually selects an MLP
GPT_OSS = model("gpt-oss-120b").config  # an MoE model stored in two formats
B200 = accelerator("B200 (HGX)")
H100 = accelerator("H100 SXM")
LLAMA_70B = model("Llama-3.1-70B").config
DRAFT = model("Llama-3.2-1B").config
OUTPUT_PROJECTION = next(k for k in layer_kernels(LLAMA, 0, "prefill") if k.name == "output projection")

#: One valid call per public numeric function, every parameter given by keyword (defaults too,
#: so that they are checked as well).
VALID: dict[str, dict[str, object]] = {
    # units: the validators themselves. ``name`` is the parameter they are told they check; their
    # messages must carry it (see ``MESSAGE_NAME`` below).
    "units.positive": dict(name="widget_count", value=3.0),
    "units.non_negative": dict(name="widget_count", value=3.0),
    "units.fraction": dict(name="widget_count", value=0.5),
    "units.whole": dict(name="widget_count", value=3, smallest=1),
    # roofline
    "roofline.balance_point_flop_per_byte": dict(peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12),
    "roofline.arithmetic_intensity_flop_per_byte": dict(flops=1e9, bytes_moved=1e6),
    "roofline.matmul_flops": dict(m=1, k=4096, n=4096),
    "roofline.matmul_bytes": dict(m=1, k=4096, n=4096, bytes_per_element=2.0),
    "roofline.square_matmul_side_at_ridge": dict(balance_flop_per_byte=281.25, bytes_per_element=2.0),
    "roofline.attainable_flop_per_s": dict(intensity_flop_per_byte=100.0, peak_flop_per_s=2.25e15,
                                           bandwidth_bytes_per_s=8e12),
    "roofline.no_overlap_flop_per_s": dict(intensity_flop_per_byte=100.0, peak_flop_per_s=2.25e15,
                                           bandwidth_bytes_per_s=8e12),
    "roofline.step_time_s": dict(flops=1e12, bytes_moved=1e9, peak_flop_per_s=2.25e15,
                                 bandwidth_bytes_per_s=8e12),
    "roofline.step_time_no_overlap_s": dict(flops=1e12, bytes_moved=1e9, peak_flop_per_s=2.25e15,
                                            bandwidth_bytes_per_s=8e12),
    "roofline.bound": dict(intensity_flop_per_byte=100.0, peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12),
    # generation
    "generation.attention_flops_per_token": dict(c=MISTRAL, context_tokens=8192),
    "generation.decode_flops_per_token": dict(c=LLAMA, context_tokens=8192),
    "generation.prefill_flops": dict(c=LLAMA, prompt_tokens=1024),
    "generation.decode_bytes_per_step": dict(weight_bytes=16e9, batch=8, kv_bytes_per_token=131_072,
                                             context_tokens=8192, activation_bytes_per_token=1.1e7),
    "generation.memory_ceiling_tokens_per_s": dict(bandwidth_bytes_per_s=8e12, weight_bytes=16e9, batch=8,
                                                   kv_bytes_per_token=131_072, context_tokens=8192,
                                                   efficiency=0.8, activation_bytes_per_token=1.1e7),
    "generation.math_ceiling_tokens_per_s": dict(peak_flop_per_s=2.25e15, flops_per_token=16e9),
    "generation.decode_step_time_s": dict(peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12,
                                          weight_bytes=16e9, flops_per_token=16e9, batch=8,
                                          kv_bytes_per_token=131_072, context_tokens=8192,
                                          activation_bytes_per_token=1.1e7),
    "generation.decode_intensity_flop_per_byte": dict(weight_bytes=16e9, flops_per_token=16e9, batch=8,
                                                      kv_bytes_per_token=131_072, context_tokens=8192,
                                                      activation_bytes_per_token=1.1e7),
    "generation.new_tokens_where_prefix_pays": dict(balance_flop_per_byte=281.25, kv_bytes_per_token=131_072,
                                                    attention_coefficient=262_144),
    "generation.time_to_first_token_s": dict(c=LLAMA, prompt_tokens=1024, peak_flop_per_s=2.25e15,
                                             bandwidth_bytes_per_s=8e12, weight_bytes=16e9,
                                             kv_bytes_per_token=131_072, activation_bytes_per_token=1.1e7),
    "generation.regime": dict(measured_tokens_per_s=400.0, memory_ceiling=498.0, math_ceiling=140_000.0,
                              near=0.5),
    "generation.prefill_attention_flops": dict(c=LLAMA, prompt_tokens=1024),
    "generation.prefill_attention_share": dict(c=LLAMA, prompt_tokens=1024),
    "generation.prompt_tokens_at_attention_share": dict(c=LLAMA, share=0.1),
    "generation.prefill_bytes_moved": dict(weight_bytes=16e9, kv_bytes_per_token=131_072, prompt_tokens=1024,
                                           activation_bytes_per_token=1.1e7),
    "generation.prefill_intensity_flop_per_byte": dict(c=LLAMA, prompt_tokens=1024, weight_bytes=16e9,
                                                       kv_bytes_per_token=131_072, activation_bytes_per_token=1.1e7),
    "generation.prefill_crossover_prompt_tokens": dict(c=LLAMA, peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12,
                                                       weight_bytes=16e9, kv_bytes_per_token=131_072,
                                                       activation_bytes_per_token=1.1e7),
    "generation.product_kernel_crossover_rows": dict(kernel=OUTPUT_PROJECTION, balance_flop_per_byte=281.25,
                                                     weight_precision="BF16", activation_precision="BF16"),
    "generation.expected_experts_touched": dict(n_experts=256, experts_per_token=8, tokens=16),
    "generation.weight_bytes_read_per_step": dict(c=DEEPSEEK, weight_precision="FP8", tokens=16),
    "generation.experts_touched_per_layer": dict(c=DEEPSEEK, tokens=16),
    "generation.weights_read_per_step": dict(c=DEEPSEEK, tokens=16),
    "generation.decode_point": dict(c=DEEPSEEK, peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12, batch=8,
                                    context_tokens=8192, weight_precision="FP8", kv_precision="BF16",
                                    activation_precision="BF16", efficiency=0.8),
    "generation.decode_step_bytes_by_part": dict(c=DEEPSEEK, batch=8, context_tokens=8192, weight_precision="FP8",
                                                 kv_precision="BF16", activation_precision="BF16"),
    "generation.prefill_point": dict(c=LLAMA, peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12, prompt_tokens=2048,
                                     weight_precision="BF16", kv_precision="BF16", activation_precision="BF16"),
    "generation.prefill_chunk_point": dict(c=LLAMA, peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12,
                                           chunk_tokens=512, cached_before=32768, weight_precision="BF16",
                                           kv_precision="BF16", activation_precision="BF16"),
    # Llama-3.1-8B: R on a B200, its K in BF16, its a = layers x heads x (d_qk + d_v); none of them is zero
    "generation.new_tokens_where_prefix_pays": dict(balance_flop_per_byte=281, kv_bytes_per_token=131_072,
                                                    attention_coefficient=262_144),
    "generation.request_timeline": dict(c=LLAMA, peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12,
                                        prompt_tokens=2048, output_tokens=32, weight_precision="BF16",
                                        kv_precision="BF16", activation_precision="BF16"),
    "generation.decode_knee_batch": dict(c=DEEPSEEK, peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12,
                                         context_tokens=1024, weight_precision="FP8", kv_precision="BF16",
                                         activation_precision="BF16"),
    "generation.prefill_crossover_tokens": dict(c=DEEPSEEK, peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12,
                                                weight_precision="FP8", kv_precision="BF16",
                                                activation_precision="BF16"),
    # activations
    "activations.layer_kernels": dict(c=DEEPSEEK, layer=5, phase="decode"),
    "activations.tensor_parallel_activation_share": dict(c=LLAMA, phase="decode", gpus=4),
    # kvcache
    "kvcache.kv_cache_bytes": dict(kv_bytes_per_token=131_072, batch=8, context_tokens=8192),
    "kvcache.batch_where_cache_equals_weights": dict(weight_bytes=16e9, kv_bytes_per_token=131_072,
                                                     context_tokens=8192),
    "kvcache.memory_left_for_cache_bytes": dict(capacity_bytes=180e9, weight_bytes=16e9, usable_fraction=0.9),
    "kvcache.max_sequences": dict(capacity_bytes=180e9, weight_bytes=16e9, kv_bytes_per_token=131_072,
                                  context_tokens=8192, usable_fraction=0.9),
    "kvcache.cache_limited_tokens_per_s": dict(bandwidth_bytes_per_s=8e12, kv_bytes_per_token=131_072,
                                               context_tokens=8192, activation_bytes_per_token=1.1e7,
                                               efficiency=0.8),
    "kvcache.per_sequence_share_of_step_bytes": dict(weight_bytes=16e9, kv_bytes_per_token=131_072,
                                                     context_tokens=8192, activation_bytes_per_token=1.1e7, batch=8),
    "kvcache.sequence_bytes_per_step": dict(kv_bytes_per_token=131_072, context_tokens=8192,
                                            activation_bytes_per_token=1.1e7),
    # no zero: a sequence brings some bytes (none would allow any batch), and a rate of zero asks nothing
    "kvcache.batch_at_user_rate": dict(bandwidth_bytes_per_s=8e12, weight_bytes=16e9, sequence_bytes=1.085e9,
                                       user_tokens_per_s=20),
    "kvcache.largest_batch_at_user_rate": dict(bandwidth_bytes_per_s=8e12, weight_bytes=16e9,
                                               sequence_bytes=1.085e9, user_tokens_per_s=20),
    "overhead.longest_gap_s": dict(device_seconds_per_step=1.88e-3, kernels_per_step=1396,
                                   target_seconds_per_step=9.48e-3),
    "kvcache.longest_context_where_math_binds": dict(peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12,
                                                     flops_per_token=16e9, attention_flops_per_cached_token=524_288,
                                                     kv_bytes_per_token=131_072, activation_bytes_per_token=1.1e7),
    "kvcache.batch_where_math_binds": dict(peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12, weight_bytes=16e9,
                                           flops_per_token=16e9, kv_bytes_per_token=131_072, context_tokens=256,
                                           activation_bytes_per_token=1.1e7),
    "kvcache.usable_fraction_needed": dict(capacity_bytes=85.9e9, weight_bytes=65.5e9, cache_bytes=1.07e9),
    "kvcache.fit": dict(capacity_bytes=180e9, weight_bytes=16e9, kv_bytes_per_token=131_072, batch=8,
                        context_tokens=8192, usable_fraction=0.9),
    "kvcache.max_context_tokens": dict(capacity_bytes=180e9, weight_bytes=16e9, kv_bytes_per_token=131_072, batch=8,
                                       usable_fraction=0.9),
    "kvcache.kv_cache_reduction": dict(baseline_bytes_per_token=389_120, new_bytes_per_token=69_120),
    "kvcache.bits_per_element_for_reduction": dict(baseline_bytes_per_token=389_120, elements_per_token=34_560,
                                                   reduction=0.933),
    # economics
    "economics.decode_step_time_no_overlap_s": dict(peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12,
                                                    weight_bytes=16e9, flops_per_token=16e9, batch=8,
                                                    kv_bytes_per_token=131_072, context_tokens=8192,
                                                    activation_bytes_per_token=1.1e7),
    "economics.per_user_tokens_per_s": dict(peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12, weight_bytes=16e9,
                                            flops_per_token=16e9, batch=8, kv_bytes_per_token=131_072,
                                            context_tokens=8192, activation_bytes_per_token=1.1e7, overlap=False),
    "economics.aggregate_tokens_per_s": dict(peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12, weight_bytes=16e9,
                                             flops_per_token=16e9, batch=8, kv_bytes_per_token=131_072,
                                             context_tokens=8192, activation_bytes_per_token=1.1e7, overlap=True),
    "economics.cost_per_million_tokens_usd": dict(usd_per_gpu_hour=5.0, tokens_per_s=498.0),
    # models
    "models.cached_tokens": dict(c=MISTRAL, context_tokens=8192),
    "models.mlp_params_per_layer": dict(c=DEEPSEEK, layer=5, active_only=False),
    "models.quantized_bytes": dict(params=8e9, vocabulary=1e9, weight_precision="INT4"),
    "models.weights_touching": dict(c=DEEPSEEK, experts_per_moe_layer=100.0),
    "models.routed_experts_read": dict(c=DEEPSEEK, experts_per_moe_layer=100.0),
    # precision (chapter 7): a model on an accelerator, its math at the precisions it runs in
    "precision.product_flops_by_precision": dict(c=GPT_OSS, weight_precision="MXFP4 experts", math_precision="FP8",
                                                 head_share=0.5),
    "precision.decode_math_rate": dict(a=B200, c=LLAMA, weight_precision="FP8", math_precision="FP8",
                                       context_tokens=8192, attention_precision="BF16"),
    "precision.prefill_math_rate": dict(a=B200, c=LLAMA, prompt_tokens=2048, weight_precision="NVFP4",
                                        math_precision="FP4", attention_precision="BF16"),
    "precision.decode_on": dict(a=B200, c=GPT_OSS, batch=8, context_tokens=8192, weight_precision="MXFP4 experts",
                                kv_precision="FP8", math_precision="FP8", efficiency=0.8, activation_precision="BF16",
                                attention_precision="BF16"),
    "precision.prefill_on": dict(a=B200, c=LLAMA, prompt_tokens=2048, weight_precision="FP8", kv_precision="FP8",
                                 math_precision="FP8", activation_precision="BF16", attention_precision="BF16"),
    "precision.knee_on": dict(a=B200, c=DEEPSEEK, context_tokens=1024, weight_precision="FP8", kv_precision="BF16",
                              math_precision="FP8", activation_precision="BF16", attention_precision="BF16"),
    "precision.decode_in_order_on": dict(a=B200, c=DEEPSEEK, batch=64, context_tokens=1024, weight_precision="FP8",
                                         kv_precision="BF16", math_precision="FP8", activation_precision="BF16",
                                         attention_precision="BF16"),
    "precision.knee_in_order_on": dict(a=B200, c=LLAMA, context_tokens=1024, weight_precision="FP8",
                                       kv_precision="BF16", math_precision="FP8", activation_precision="BF16",
                                       attention_precision="BF16"),
    # parallel, speculative, serving (chapter 9)
    "parallel.measured_exchanges_s": dict(gpus=8),
    "parallel.all_reduce_time_s": dict(message_bytes=16384, gpus=8, link_bytes_per_s=4.5e11, latency_s=1e-5),
    "parallel.all_gather_time_s": dict(message_bytes=256_512, gpus=8, link_bytes_per_s=4.5e11, latency_s=1e-5),
    "parallel.send_time_s": dict(message_bytes=16384, link_bytes_per_s=4.5e11, latency_s=1e-5),
    "parallel.cache_share": dict(c=LLAMA, gpus=8),
    "parallel.collective_latency_s": dict(link_kind="PCIe", gpus=4),
    "parallel.tensor_parallel_communication_s": dict(a=H100, c=LLAMA_70B, gpus=4, batch=8, activation_precision="BF16",
                                                     logits_tokens=8),
    "parallel.tensor_parallel_fit": dict(a=H100, c=LLAMA_70B, gpus=4, batch=8, context_tokens=4096,
                                         weight_precision="FP8", kv_precision="FP8"),
    "parallel.tensor_parallel_read_bytes": dict(c=LLAMA_70B, gpus=4, point=decode_on(H100, LLAMA_70B, 40, 4096),
                                                tokens_per_sequence=5),
    "parallel.tensor_parallel_on": dict(a=H100, c=LLAMA_70B, gpus=4, batch=8, context_tokens=4096, weight_precision="FP8",
                                        kv_precision="FP8", math_precision="FP8", activation_precision="BF16",
                                        tokens_per_sequence=5),
    "parallel.pipeline_on": dict(a=H100, c=LLAMA_70B, stages=4, batch=8, context_tokens=4096, micro_batches=4,
                                 weight_precision="FP8", kv_precision="FP8", math_precision="FP8",
                                 activation_precision="BF16"),
    "parallel.expert_parallel_on": dict(a=H100, c=DEEPSEEK, gpus=8, batch=64, context_tokens=4096, weight_precision="FP8",
                                        kv_precision="BF16", math_precision="FP8", activation_precision="BF16",
                                        exchange_s=1e-4),
    "parallel.remote_destinations": dict(c=DEEPSEEK, gpus=8),
    "parallel.tensor_parallel_prefill_crossover": dict(a=H100, c=LLAMA_70B, gpus=4, weight_precision="FP8",
                                                      kv_precision="FP8", math_precision="FP8"),
    "parallel.exchange_time_s": dict(a=H100, c=DEEPSEEK, gpus=8, batch=64, activation_precision="BF16"),
    "parallel.tensor_parallel_tie_batch": dict(weight_bytes=8.03e9, bandwidth_bytes_per_s=3.35e12, gpus=8,
                                               replica_sequence_bytes=2.8e8, split_sequence_bytes=3.8e7,
                                               collectives=66, latency_s=1e-5, seconds_per_sequence=2.57e-6),
    "parallel.data_parallel_on": dict(a=H100, c=LLAMA, replicas=4, batch=32, context_tokens=4096, weight_precision="FP8",
                                      kv_precision="FP8", math_precision="FP8", activation_precision="BF16"),
    "speculative.expected_tokens_per_step": dict(acceptance=0.7, draft_tokens=4),
    "speculative.estimated_speedup": dict(acceptance=0.7, draft_tokens=4, draft_cost=0.022),
    "speculative.draft_acceptance_rate": dict(acceptance=0.7, draft_tokens=4),
    "speculative.acceptance_from_draft_rate": dict(draft_rate=0.44, draft_tokens=4),
    "speculative.verify_step_s": dict(a=H100, c=LLAMA_70B, batch=8, draft_tokens=4, context_tokens=2048,
                                      weight_precision="FP8", kv_precision="FP8", math_precision="FP8", gpus=2),
    "speculative.speculative_on": dict(a=H100, c=LLAMA_70B, draft=DRAFT, batch=8, acceptance=0.7, draft_tokens=4,
                                       context_tokens=2048, weight_precision="FP8", kv_precision="FP8",
                                       math_precision="FP8", gpus=2),
    "serving.mixed_step_s": dict(a=H100, c=LLAMA, decode_tokens=64, prompt_tokens=256, context_tokens=1152,
                                 prompt_length=1024, chunk_tokens=512, gpus=1, weight_precision="FP8", kv_precision="FP8",
                                 math_precision="FP8"),
    "serving.serving_point": dict(a=H100, c=LLAMA, batch=64, prompt_tokens=1024, output_tokens=256, gpus=1,
                                  step_tokens=8192, weight_precision="FP8", kv_precision="FP8", math_precision="FP8"),
    # overhead (chapter 6)
    "overhead.launches_per_step": dict(c=LLAMA, kernels_per_layer=43, kernels_outside_layers=20),
    "overhead.host_time_per_step_s": dict(launches_per_step=1396, seconds_per_launch=1e-5),
    "overhead.overhead_ceiling_tokens_per_s": dict(launches_per_step=1396, seconds_per_launch=1e-5, batch=4),
    "overhead.seconds_per_launch_to_explain": dict(measured_tokens_per_s=29.0, launches_per_step=1396, batch=1),
    "overhead.launch_budget_per_step": dict(target_tokens_per_s=498.0, seconds_per_launch=1e-5, batch=1),
    "overhead.serial_tokens_per_s": dict(host_seconds_per_step=0.014, device_seconds_per_step=0.002, batch=1),
    "overhead.binding_wall": dict(memory_ceiling=498.0, math_ceiling=140_000.0, overhead_ceiling=72.0),
    "overhead.fit_call_overhead": dict(calls=[8.0, 1.0], elements=[64.0, 64.0], seconds=[9e-6, 2e-6]),
    "overhead.dispatch_sweep": dict(total_elements=64, elements_per_call=(1, 8), repeats=1),
    "overhead.overhead_bound_batch": dict(host_seconds_per_step=0.014, weight_bytes=15e9, sequence_bytes=1.4e8,
                                          bandwidth_bytes_per_s=8e12, flops_per_token=15e9, peak_flop_per_s=2.25e15),
    "overhead.eager_step_kernels": dict(c=LLAMA, batch=4, context_tokens=1000, weight_precision="BF16",
                                        kv_precision="BF16", activation_precision="BF16"),
    "overhead.launch_timeline": dict(kernel_seconds=[1e-6, 2e-6], seconds_per_launch=1e-5, graph=False),
    # indexcard (chapter 7)
    "indexcard.memory_verdict": dict(weight_bytes=1e9, cache_bytes=2e9, activation_bytes=5e8),
    "indexcard.read_card": dict(accelerator_name="B200 (HGX)", model_name="Llama-3.1-8B", weight_precision="FP8",
                                kv_precision="BF16", batch=8, context_tokens=8192, prompt_tokens=2048,
                                measured_tokens_per_s=29.0, near=0.5, math_precision="FP8",
                                gpus=2),
    # worked_example (chapter 8)
    "worked_example.gives": dict(cl=worked_example.claim("usable"), values=(81.6e9,)),
    "worked_example.off": dict(cl=worked_example.claim("usable"), values=(81.6e9,)),
    "worked_example.context_tokens_at_compute_time": dict(c=LLAMA, peak_flop_per_s=3.12e14, seconds=3e-4),
    "worked_example.implied_bandwidth_bytes_per_s": dict(bytes_moved=66e9, seconds=0.046),
}

#: Where zero is a real case, so only negative, NaN, infinite, absurd and non-numbers are bad.
ZERO_ALLOWED: set[tuple[str, str]] = {
    # non_negative exists to accept zero; a count may start at zero
    ("units.non_negative", "value"),
    ("units.whole", "smallest"),
    # a step may be pure memory traffic or pure math, though not both zero
    ("roofline.step_time_s", "flops"),
    ("roofline.step_time_s", "bytes_moved"),
    ("roofline.step_time_no_overlap_s", "flops"),
    ("roofline.step_time_no_overlap_s", "bytes_moved"),
    ("kvcache.longest_context_where_math_binds", "attention_flops_per_cached_token"),
    ("kvcache.longest_context_where_math_binds", "activation_bytes_per_token"),
    # an empty context (the first generated token) attends over nothing
    ("generation.attention_flops_per_token", "context_tokens"),
    ("generation.decode_flops_per_token", "context_tokens"),
    ("models.cached_tokens", "context_tokens"),
    ("kvcache.kv_cache_bytes", "context_tokens"),
    # an empty context has no cache; activations not counted: a weights-only step
    ("kvcache.per_sequence_share_of_step_bytes", "context_tokens"),
    ("kvcache.per_sequence_share_of_step_bytes", "activation_bytes_per_token"),
    ("kvcache.per_sequence_share_of_step_bytes", "kv_bytes_per_token"),
    ("kvcache.cache_limited_tokens_per_s", "activation_bytes_per_token"),
    ("kvcache.cache_limited_tokens_per_s", "context_tokens"),
    # weights only (no cache counted): the batch where math binds is the balance point times W / F
    # a sequence with no cache counted, no context or no activations counted brings less, not an error
    ("kvcache.sequence_bytes_per_step", "kv_bytes_per_token"),
    ("kvcache.sequence_bytes_per_step", "context_tokens"),
    ("kvcache.sequence_bytes_per_step", "activation_bytes_per_token"),
    ("kvcache.batch_where_math_binds", "kv_bytes_per_token"),
    ("kvcache.batch_where_math_binds", "context_tokens"),
    ("kvcache.batch_where_math_binds", "activation_bytes_per_token"),
    # no cache (the weights alone must fit)
    ("kvcache.fit", "kv_bytes_per_token"),
    ("kvcache.usable_fraction_needed", "cache_bytes"),
    ("kvcache.fit", "context_tokens"),
    # an empty context; a prompt with no activations counted; no tables kept at another precision
    ("generation.decode_point", "context_tokens"),
    ("generation.decode_step_bytes_by_part", "context_tokens"),
    ("generation.decode_knee_batch", "context_tokens"),
    ("generation.prefill_chunk_point", "cached_before"),
    ("generation.prefill_bytes_moved", "activation_bytes_per_token"),
    ("generation.prefill_intensity_flop_per_byte", "activation_bytes_per_token"),
    ("generation.prefill_crossover_prompt_tokens", "activation_bytes_per_token"),
    ("generation.time_to_first_token_s", "activation_bytes_per_token"),
    ("models.quantized_bytes", "vocabulary"),
    ("precision.decode_math_rate", "context_tokens"),
    ("precision.decode_on", "context_tokens"),
    ("precision.knee_on", "context_tokens"),
    ("precision.decode_in_order_on", "context_tokens"),
    ("precision.knee_in_order_on", "context_tokens"),
    # an ideal link with no fixed cost; nothing to send; an empty context; nothing accepted, no draft
    ("parallel.all_reduce_time_s", "latency_s"),
    ("parallel.all_gather_time_s", "latency_s"),
    ("parallel.send_time_s", "latency_s"),
    ("parallel.all_reduce_time_s", "message_bytes"),
    ("parallel.all_gather_time_s", "message_bytes"),
    ("parallel.send_time_s", "message_bytes"),
    ("parallel.tensor_parallel_communication_s", "logits_tokens"),   # a pass that samples nothing (a prompt chunk)
    ("parallel.tensor_parallel_on", "context_tokens"),
    ("parallel.tensor_parallel_fit", "context_tokens"),
    ("parallel.pipeline_on", "context_tokens"),
    ("parallel.expert_parallel_on", "context_tokens"),
    ("parallel.expert_parallel_on", "exchange_s"),   # an ideal exchange
    ("parallel.data_parallel_on", "context_tokens"),
    ("parallel.tensor_parallel_tie_batch", "latency_s"),              # collectives with no fixed cost
    ("parallel.tensor_parallel_tie_batch", "seconds_per_sequence"),   # messages whose bytes cost nothing
    ("speculative.expected_tokens_per_step", "acceptance"),
    ("speculative.expected_tokens_per_step", "draft_tokens"),
    ("speculative.estimated_speedup", "acceptance"),     # nothing accepted
    ("speculative.estimated_speedup", "draft_tokens"),   # no draft: a speed-up of one
    ("speculative.estimated_speedup", "draft_cost"),     # a draft that costs nothing
    ("speculative.draft_acceptance_rate", "acceptance"),       # nothing accepted
    ("speculative.acceptance_from_draft_rate", "draft_rate"),  # nothing accepted
    ("speculative.verify_step_s", "draft_tokens"),
    ("speculative.verify_step_s", "context_tokens"),
    ("speculative.speculative_on", "acceptance"),
    ("speculative.speculative_on", "draft_tokens"),
    ("speculative.speculative_on", "context_tokens"),
    # a step of decode tokens alone, or of prompt tokens alone
    ("serving.mixed_step_s", "decode_tokens"),
    ("serving.mixed_step_s", "prompt_tokens"),
    ("serving.mixed_step_s", "context_tokens"),
    # layer indices count from zero
    ("activations.layer_kernels", "layer"),
    # decode with no cache reduces to the weights-only case
    ("economics.decode_step_time_no_overlap_s", "kv_bytes_per_token"),
    ("economics.decode_step_time_no_overlap_s", "context_tokens"),
    ("economics.per_user_tokens_per_s", "kv_bytes_per_token"),
    ("economics.per_user_tokens_per_s", "context_tokens"),
    ("economics.aggregate_tokens_per_s", "kv_bytes_per_token"),
    ("economics.aggregate_tokens_per_s", "context_tokens"),
    ("economics.decode_step_time_no_overlap_s", "activation_bytes_per_token"),
    ("economics.per_user_tokens_per_s", "activation_bytes_per_token"),
    ("economics.aggregate_tokens_per_s", "activation_bytes_per_token"),
    # decode with no cache (L = 0) or a cache not counted (K = 0) reduces to the weights-only case
    ("generation.decode_bytes_per_step", "kv_bytes_per_token"),
    ("generation.decode_bytes_per_step", "context_tokens"),
    ("generation.memory_ceiling_tokens_per_s", "kv_bytes_per_token"),
    ("generation.memory_ceiling_tokens_per_s", "context_tokens"),
    ("generation.decode_step_time_s", "kv_bytes_per_token"),
    ("generation.decode_step_time_s", "context_tokens"),
    ("generation.decode_intensity_flop_per_byte", "kv_bytes_per_token"),
    ("generation.decode_intensity_flop_per_byte", "context_tokens"),
    ("generation.decode_bytes_per_step", "activation_bytes_per_token"),
    ("generation.memory_ceiling_tokens_per_s", "activation_bytes_per_token"),
    ("generation.decode_step_time_s", "activation_bytes_per_token"),
    ("generation.decode_intensity_flop_per_byte", "activation_bytes_per_token"),
    # layer indices count from zero
    ("models.mlp_params_per_layer", "layer"),
    # no kernels outside the layers; an empty context; no measured rate (0 means none given)
    ("overhead.launches_per_step", "kernels_outside_layers"),
    ("overhead.eager_step_kernels", "context_tokens"),
    ("indexcard.read_card", "context_tokens"),
    ("indexcard.read_card", "measured_tokens_per_s"),
    # a recomputed value may be zero (nothing left for the caches)
    ("worked_example.gives", "values"),
    # a step may read no cache (no context) and, in principle, no weights or activations
    ("indexcard.memory_verdict", "weight_bytes"),
    ("indexcard.memory_verdict", "cache_bytes"),
    ("indexcard.memory_verdict", "activation_bytes"),
}

#: Where None is a real value, and the value it stands for: the book's own rule (the usable share
#: of ``data/serving.toml``), or a default that follows from the other arguments.
def _usable() -> float:
    from inferlimits.arithmetic.kvcache import usable_memory_fraction
    return usable_memory_fraction()


NONE_ALLOWED: dict[tuple[str, str], object] = {
    ("kvcache.memory_left_for_cache_bytes", "usable_fraction"): _usable,
    ("kvcache.max_sequences", "usable_fraction"): _usable,
    ("kvcache.max_context_tokens", "usable_fraction"): _usable,
    ("kvcache.fit", "usable_fraction"): _usable,
    ("parallel.pipeline_on", "micro_batches"): lambda: VALID["parallel.pipeline_on"]["stages"],   # one per stage
    ("serving.mixed_step_s", "chunk_tokens"): lambda: VALID["serving.mixed_step_s"]["prompt_length"],   # whole prompts
    ("parallel.expert_parallel_on", "exchange_s"):   # the book's own model of an exchange
        lambda: _call("parallel.exchange_time_s"),
    ("parallel.tensor_parallel_communication_s", "logits_tokens"):   # every token's logits
        lambda: VALID["parallel.tensor_parallel_communication_s"]["batch"],
}

#: The name a message must carry when it is not the parameter's own: the validators name the
#: quantity they were asked to check.
MESSAGE_NAME: dict[tuple[str, str], str] = {
    ("units.positive", "value"): "widget_count",
    ("units.non_negative", "value"): "widget_count",
    ("units.fraction", "value"): "widget_count",
    ("units.whole", "value"): "widget_count",
    ("units.whole", "smallest"): "smallest",
}

BAD_NUMBERS = [
    pytest.param(-1.0, id="negative"),
    pytest.param(-math.inf, id="-inf"),
    pytest.param(math.nan, id="nan"),
    pytest.param(math.inf, id="+inf"),
    pytest.param(1e300, id="huge"),
]
ZERO = pytest.param(0, id="zero")
NOT_NUMBERS = [
    pytest.param(True, id="True"),
    pytest.param(False, id="False"),
    pytest.param("1", id="str"),
    pytest.param("1e3", id="str-float"),
    pytest.param(None, id="None"),
]


# ---- introspection ------------------------------------------------------------------------------

_NUMERIC_ANNOTATION = re.compile(r"\b(float|int|Real|Number|object)\b")


def _is_numeric(p: inspect.Parameter) -> bool:
    """A parameter that takes a number: annotated float/int/Real/object, or not annotated at all
    (conservatively)."""
    ann = p.annotation
    if ann is inspect.Parameter.empty:
        return True
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
    return bool(_NUMERIC_ANNOTATION.search(text))


def _public_functions() -> dict[str, object]:
    found = {}
    for name in MODULES:
        mod = importlib.import_module(MODULES[name])
        for fname, fn in inspect.getmembers(mod, inspect.isfunction):
            if not fname.startswith("_") and fn.__module__ == mod.__name__:
                found[f"{name}.{fname}"] = fn
    return found


FUNCTIONS = _public_functions()


def _numeric_params(key: str) -> list[str]:
    return [p.name for p in inspect.signature(FUNCTIONS[key]).parameters.values() if _is_numeric(p)]


NUMERIC_FUNCTIONS = {key for key in FUNCTIONS if _numeric_params(key)}


def _cases(values, *, zero: bool):
    cases = []
    for key in sorted(VALID):
        if key not in FUNCTIONS:
            continue  # reported by the table tests
        for param in _numeric_params(key):
            if zero and (key, param) in ZERO_ALLOWED:
                continue
            for v in values:
                cases.append(pytest.param(key, param, v.values[0], id=f"{key}-{param}-{v.id}"))
    return cases


def _call(key: str, **overrides):
    return FUNCTIONS[key](**{**VALID[key], **overrides})


def _name_pattern(key: str, param: str) -> str:
    """The parameter's name as a whole word (so that ``m`` does not match the ``m`` of 'must')."""
    return rf"\b{re.escape(MESSAGE_NAME.get((key, param), param))}\b"


# ---- the table is complete and valid ------------------------------------------------------------

def test_every_public_numeric_function_is_in_the_table():
    missing = sorted(NUMERIC_FUNCTIONS - set(VALID))
    assert not missing, f"public numeric functions without an entry in VALID: {missing}"


def test_the_table_names_only_existing_numeric_functions():
    stale = sorted(set(VALID) - NUMERIC_FUNCTIONS)
    assert not stale, f"VALID entries for functions that are gone or take no number: {stale}"


@pytest.mark.parametrize("key", sorted(VALID))
def test_each_entry_gives_every_parameter(key):
    if key not in FUNCTIONS:
        pytest.skip("stale entry, reported above")
    params = set(inspect.signature(FUNCTIONS[key]).parameters)
    assert set(VALID[key]) == params


def test_zero_allowed_and_message_names_refer_to_real_parameters():
    for key, param in ZERO_ALLOWED | set(MESSAGE_NAME):
        assert key in VALID and param in _numeric_params(key), (key, param)


@pytest.mark.parametrize("key", sorted(VALID))
def test_each_entry_is_a_valid_call(key):
    if key not in FUNCTIONS:
        pytest.skip("stale entry, reported above")
    result = _call(key)
    if isinstance(result, (int, float)):
        assert math.isfinite(result) and result >= 0


# ---- bad numbers --------------------------------------------------------------------------------

@pytest.mark.parametrize("key,param,bad", _cases(BAD_NUMBERS, zero=False))
def test_rejects_negative_nan_infinite_and_absurd(key, param, bad):
    with pytest.raises(ValueError, match=_name_pattern(key, param)):
        _call(key, **{param: bad})


@pytest.mark.parametrize("key,param,bad", _cases([ZERO], zero=True))
def test_rejects_zero_where_zero_is_meaningless(key, param, bad):
    with pytest.raises(ValueError, match=_name_pattern(key, param)):
        _call(key, **{param: bad})


@pytest.mark.parametrize("key,param", sorted(ZERO_ALLOWED))
def test_accepts_zero_where_zero_is_meaningful(key, param):
    result = _call(key, **{param: 0})
    if isinstance(result, (int, float)):  # a function may return an object (an index card)
        assert math.isfinite(result) and result >= 0


@pytest.mark.parametrize("key,param,bad", _cases(NOT_NUMBERS, zero=False))
def test_rejects_booleans_strings_and_none(key, param, bad):
    if bad is None and (key, param) in NONE_ALLOWED:
        pytest.skip("None means the book's own rule here (test_none_means_the_books_rule)")
    with pytest.raises(ValueError, match=_name_pattern(key, param)):
        _call(key, **{param: bad})


@pytest.mark.parametrize("key,param", sorted(NONE_ALLOWED))
def test_none_means_the_books_rule(key, param):
    assert _call(key, **{param: None}) == _call(key, **{param: NONE_ALLOWED[key, param]()})


def test_step_time_rejects_a_step_that_does_nothing():
    with pytest.raises(ValueError, match=r"\bflops\b"):
        _call("roofline.step_time_s", flops=0, bytes_moved=0)


def test_fraction_rejects_more_than_one():
    for key, param in [("units.fraction", "value"), ("generation.memory_ceiling_tokens_per_s", "efficiency"),
                       ("generation.regime", "near"), ("kvcache.max_sequences", "usable_fraction"),
                       ("kvcache.memory_left_for_cache_bytes", "usable_fraction"),
                       ("kvcache.max_context_tokens", "usable_fraction"),
                       ("kvcache.cache_limited_tokens_per_s", "efficiency"),
                       ("kvcache.fit", "usable_fraction"), ("generation.decode_point", "efficiency"),
                       ("kvcache.bits_per_element_for_reduction", "reduction"),
                       ("precision.product_flops_by_precision", "head_share")]:
        with pytest.raises(ValueError, match=_name_pattern(key, param)):
            _call(key, **{param: 1.5})


# ---- names --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["B300", "b200 (hgx)", "H100", "", " H100 SXM", None, 42])
def test_unknown_accelerator_names_raise_naming_accelerator(name):
    with pytest.raises(ValueError, match=r"\baccelerator\b"):
        accelerator(name)


@pytest.mark.parametrize("name", ["Llama-3.3-70B", "llama-3.1-8b", "Llama-3.1-8B ", "", None, 8])
def test_unknown_model_names_raise_naming_model(name):
    with pytest.raises(ValueError, match=r"\bmodel\b"):
        model(name)
