"""Several GPUs, speculative decoding and the serving frontier: the communication term, the
expected tokens of a verification step, and the shape of the trade-off between each user's speed
and the fleet's."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferlimits.data import datafiles
from inferlimits.arithmetic.generation import COMPUTE_BOUND
from inferlimits.data.hardware import accelerator, accelerators
from inferlimits.data.models import model, weight_bytes
from inferlimits.arithmetic.activations import tensor_parallel_activation_share
from inferlimits.arithmetic.parallel import (COMMUNICATION_BOUND, all_reduce_time_s, cache_share, collective_latency_s,
                                             data_parallel_on, exchange_time_s, expert_parallel_on,
                                             measured_exchanges_s, pipeline_on, remote_destinations,
                                             tensor_parallel_communication_s, tensor_parallel_on)
from inferlimits.arithmetic.precision import decode_on
from inferlimits.arithmetic.serving import serving_point
from inferlimits.arithmetic.speculative import expected_tokens_per_step, speculative_on, verify_step_s
from inferlimits.data.units import GB

H100 = accelerator("H100 SXM")
LLAMA_8B, LLAMA_70B = model("Llama-3.1-8B").config, model("Llama-3.1-70B").config
DEEPSEEK = model("DeepSeek-V3").config
SWITCHED = [a for a in accelerators().values() if a.link.peer_bytes_per_s is None]


# ---- the communication term ---------------------------------------------------------------------

@pytest.mark.parametrize("a", list(accelerators().values()), ids=lambda a: a.name)
def test_one_gpu_communicates_nothing(a):
    assert tensor_parallel_communication_s(a, LLAMA_70B, 1, 64) == 0.0
    step = tensor_parallel_on(a, LLAMA_8B, 1, 8, 1024)
    point = decode_on(a, LLAMA_8B, 8, 1024)
    assert step.communication_s == 0.0
    assert step.aggregate == pytest.approx(point.ceiling, rel=1e-12)   # one GPU is the book's one-device model


@pytest.mark.parametrize("a", SWITCHED, ids=lambda a: a.name)
@pytest.mark.parametrize("batch", [1, 64, 1024])
def test_communication_grows_with_the_gpus_behind_a_switch(a, batch):
    times = [tensor_parallel_communication_s(a, LLAMA_70B, T, batch) for T in (1, 2, 4, 8)]
    assert all(x < y for x, y in zip(times, times[1:])), times


def test_direct_links_add_bandwidth_with_the_gpus():
    """AMD's links go one to each other GPU: a pair has one link, eight GPUs use seven each."""
    link = accelerator("MI300X").link
    assert link.bytes_per_s_among(2) == link.peer_bytes_per_s
    assert link.bytes_per_s_among(8) == 7 * link.peer_bytes_per_s == link.bytes_per_s
    assert link.bytes_per_s_among(16) == link.bytes_per_s


@given(m=st.floats(1.0, 1e9), T=st.integers(2, 64), bw=st.floats(1e9, 1e12), alpha=st.floats(0.0, 1e-4))
def test_all_reduce_is_latency_plus_bus_bytes(m, T, bw, alpha):
    t = all_reduce_time_s(m, T, bw, alpha)
    assert t == pytest.approx(alpha + 2 * (T - 1) / T * m / bw)
    assert alpha + m / bw <= t * (1 + 1e-12) and t <= alpha + 2 * m / bw


def test_the_latency_is_read_per_link_kind_and_over_pcie_per_gpu_count():
    table = datafiles.load("collectives.toml")["latency"]
    for kind in ("NVLink", "Infinity Fabric"):
        assert collective_latency_s(kind, 8) == collective_latency_s(kind) == table[kind] * 1e-6
    pcie = table["PCIe"]
    assert collective_latency_s("PCIe", 2) == collective_latency_s("PCIe", 4) == pcie["4"] * 1e-6
    assert collective_latency_s("PCIe", 8) == pcie["8"] * 1e-6 > collective_latency_s("PCIe", 4)
    with pytest.raises(ValueError, match="link_kind"):
        collective_latency_s("carrier pigeon")
    with pytest.raises(ValueError, match="gpus"):
        collective_latency_s("PCIe", 16)


def test_tensor_parallelism_splits_weights_and_math():
    one, four = tensor_parallel_on(H100, LLAMA_70B, 1, 8, 4096), tensor_parallel_on(H100, LLAMA_70B, 4, 8, 4096)
    assert four.weight_bytes_per_gpu == pytest.approx(one.weight_bytes_per_gpu / 4)
    assert four.math_s == pytest.approx(one.math_s / 4)
    assert four.memory_s < one.memory_s / 3.9                    # its 8 KV heads divide by 4
    assert not one.fits and four.fits                              # 141 GB of BF16 weights need two H100s or more


def test_the_cache_stops_dividing_once_the_gpus_pass_the_kv_heads():
    assert [cache_share(LLAMA_70B, T) for T in (1, 2, 8, 16, 32)] == [1, 0.5, 0.125, 0.125, 0.125]
    assert cache_share(DEEPSEEK, 8) == 1.0                            # MLA's latent: whole on every GPU


def test_more_gpus_can_make_each_user_slower():
    """A small model on a fast part: its whole read takes less than the all-reduces it would add."""
    b200, small = accelerator("B200 (HGX)"), model("Llama-3.2-1B").config
    speeds = [tensor_parallel_on(b200, small, T, 1, 1024).per_user for T in (1, 2, 4, 8)]
    assert all(s < speeds[0] for s in speeds[1:]), speeds
    assert tensor_parallel_on(b200, small, 8, 1, 1024).wall == COMMUNICATION_BOUND
    big = [tensor_parallel_on(b200, LLAMA_70B, T, 1, 1024).per_user for T in (2, 4, 8)]
    assert big == sorted(big)                                       # a 70B model still gains


def test_a_pipeline_buys_room_not_speed_for_one_sequence():
    whole = 1 / decode_on(H100, LLAMA_70B, 1, 0, "FP8", "FP8", "FP8").ceiling
    for P in (2, 4, 8):
        p = pipeline_on(H100, LLAMA_70B, P, 1, 0, weight_precision="FP8", kv_precision="FP8", math_precision="FP8")
        assert p.token_interval_s > whole                          # no faster than one GPU reading it all
        assert p.weight_bytes_per_gpu == pytest.approx(weight_bytes(LLAMA_70B, "FP8") / P)


def test_replicas_multiply_tokens_and_keep_each_users_speed():
    one = data_parallel_on(H100, LLAMA_8B, 1, 16, 2048)
    four = data_parallel_on(H100, LLAMA_8B, 4, 64, 2048)
    assert four.per_user == pytest.approx(one.per_user) and four.aggregate == pytest.approx(4 * one.aggregate)


def test_expert_parallelism_fits_what_tensor_parallelism_cannot():
    """DeepSeek-V3 on 8 H200s at 256 sequences of 4,096 tokens: under tensor parallelism every GPU
    keeps every sequence's latent cache; under expert parallelism with data-parallel attention
    each keeps its own sequences'."""
    h200 = accelerator("H200 SXM")
    ep = expert_parallel_on(h200, DEEPSEEK, 8, 256, 4096, "FP8", "BF16", "FP8")
    tp = tensor_parallel_on(h200, DEEPSEEK, 8, 256, 4096, "FP8", "BF16", "FP8")
    assert ep.fits and not tp.fits
    assert ep.cache_bytes_per_gpu == pytest.approx(tp.cache_bytes_per_gpu / 8)
    with pytest.raises(ValueError, match="mixture-of-experts"):
        expert_parallel_on(h200, LLAMA_8B, 8)


@pytest.mark.parametrize("name", ["Llama-3.1-70B", "DeepSeek-V3", "Qwen3-30B-A3B"])
def test_each_tensor_parallel_gpu_moves_a_falling_share_of_the_activations_never_below_the_whole_parts(name):
    c = model(name).config
    for phase in ("decode", "prefill"):
        shares = [tensor_parallel_activation_share(c, phase, T) for T in (1, 2, 4, 8)]
        assert shares[0] == 1 and all(x > y for x, y in zip(shares, shares[1:])), shares
        assert shares[-1] > 1.5 / 8  # the norms, residual adds and hidden vectors are every GPU's


def test_one_gpus_share_of_a_prefill_turns_compute_bound_later_as_the_gpus_grow():
    from inferlimits.arithmetic.parallel import tensor_parallel_prefill_crossover
    from inferlimits.arithmetic.precision import crossover_on

    b200 = accelerator("B200 (HGX)")
    assert tensor_parallel_prefill_crossover(b200, LLAMA_8B, 1) == crossover_on(b200, LLAMA_8B)
    crossings = [tensor_parallel_prefill_crossover(b200, LLAMA_8B, T) for T in (1, 2, 4, 8)]
    assert all(x < y for x, y in zip(crossings, crossings[1:])), crossings


def test_a_token_goes_once_to_each_other_gpu_that_holds_one_of_its_experts():
    """Against a simulation: 8 GPUs with 32 of DeepSeek-V3's 256 experts each, 8 experts a token."""
    import numpy as np

    G, E, k = 8, DEEPSEEK.routed_experts, DEEPSEEK.num_experts_per_tok
    rng = np.random.default_rng(0)
    tokens = 20_000
    chosen = np.array([rng.choice(E, k, replace=False) for _ in range(tokens)]) // (E // G)
    own = rng.integers(0, G, tokens)
    remote = [len(set(row) - {o}) for row, o in zip(chosen, own)]
    assert remote_destinations(DEEPSEEK, G) == pytest.approx(np.mean(remote), rel=0.02)
    assert remote_destinations(DEEPSEEK, 1) == 0 and remote_destinations(DEEPSEEK, G) < min(G - 1, k)
    with pytest.raises(ValueError, match="gpus"):
        remote_destinations(DEEPSEEK, 3)


def test_the_measured_all_to_all_is_slower_than_the_books_exchange():
    """DeepEP's dispatch and combine of 128 tokens per GPU on eight GPUs take longer than the
    book's exchange of as many tokens over NVLink: the book's expert-parallel figure is the fast end."""
    dispatch, combine = measured_exchanges_s()
    modelled = exchange_time_s(accelerator("H200 SXM"), DEEPSEEK, 8, 8 * 128)
    assert min(dispatch, combine) > modelled
    h200 = accelerator("H200 SXM")
    fast = expert_parallel_on(h200, DEEPSEEK, 8, 256, 4096, "FP8", "BF16", "FP8")
    slow = expert_parallel_on(h200, DEEPSEEK, 8, 256, 4096, "FP8", "BF16", "FP8", exchange_s=(dispatch + combine) / 2)
    assert slow.per_user < fast.per_user and slow.communication_s == pytest.approx(
        sum(DEEPSEEK.layer_is_moe(i) for i in range(DEEPSEEK.num_hidden_layers)) * (dispatch + combine))


def test_the_measured_all_to_all_grows_with_the_gpu_count_and_names_a_missing_row():
    """DeepEP's rows for 8 and 64 GPUs: the default is the row of one server, both exchanges take
    longer on 64 GPUs, and a GPU count the data has no row for is refused with the parameter's name."""
    assert measured_exchanges_s() == measured_exchanges_s(8)
    (d8, c8), (d64, c64) = measured_exchanges_s(8), measured_exchanges_s(64)
    assert (d64, c64) == pytest.approx((173e-6, 314e-6)) and d64 > d8 and c64 > c8
    for bad in (16, 0, -8, 8.5):
        with pytest.raises(ValueError, match="gpus"):
            measured_exchanges_s(bad)


# ---- speculative decoding -----------------------------------------------------------------------

@given(k=st.integers(0, 16))
def test_expected_tokens_at_the_two_ends(k):
    assert expected_tokens_per_step(0.0, k) == 1.0
    assert expected_tokens_per_step(1.0, k) == k + 1


@given(a=st.floats(0.0, 0.999), k=st.integers(0, 15))
def test_expected_tokens_grow_with_acceptance_and_draft_length(a, k):
    e = expected_tokens_per_step(a, k)
    assert e == pytest.approx(sum(a ** i for i in range(k + 1)))
    assert expected_tokens_per_step(a, k + 1) >= e
    assert expected_tokens_per_step(min(a + 0.001, 1.0), k) >= e


def test_verifying_no_draft_is_a_plain_step():
    p = decode_on(H100, LLAMA_70B, 8, 2048)
    assert verify_step_s(H100, LLAMA_70B, 8, 0, 2048) == pytest.approx(8 / p.ceiling)


def test_the_gain_fades_as_batching_spends_the_idle_math():
    draft = model("Llama-3.2-1B").config
    gains = [speculative_on(H100, LLAMA_70B, draft, B, 0.7, 4, 2048, "FP8", "FP8", "FP8").speedup
             for B in (1, 16, 64, 256, 1024)]
    assert all(x > y for x, y in zip(gains, gains[1:])), gains
    assert gains[0] > 2 and gains[-1] < 1                          # a loss once decode is compute-bound
    free = speculative_on(H100, LLAMA_70B, None, 1, 0.7, 4, 2048, "FP8", "FP8", "FP8")
    assert free.speedup > gains[0]                                 # the draft's own cost comes off


# ---- the serving frontier -----------------------------------------------------------------------

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


@pytest.mark.parametrize("name,gpus", [("Llama-3.1-8B", 1), ("Llama-3.1-70B", 4), ("Qwen3-30B-A3B", 1)])
def test_the_frontier_trades_each_users_speed_for_the_fleets(name, gpus):
    c = model(name).config
    points = [serving_point(H100, c, B, 1024, 256, gpus, 8192, "FP8", "FP8", "FP8") for B in BATCHES]
    users = [p.per_user for p in points]
    fleet = [p.aggregate for p in points]
    first = [p.first_token_s for p in points]
    assert all(x > y for x, y in zip(users, users[1:])), users
    assert all(x < y for x, y in zip(fleet, fleet[1:])), fleet
    assert all(x <= y * (1 + 1e-12) for x, y in zip(first, first[1:])), first


def test_prompts_that_keep_arriving_cost_the_fleet():
    """The same batch decodes more slowly when each sequence's prompt is long against its output."""
    short = serving_point(H100, LLAMA_8B, 256, 128, 512, 1, 8192, "FP8", "FP8", "FP8")
    long = serving_point(H100, LLAMA_8B, 256, 4096, 128, 1, 8192, "FP8", "FP8", "FP8")
    assert long.per_user < short.per_user and long.first_token_s > short.first_token_s


def test_a_new_user_waits_at_least_half_a_step_and_a_step():
    for B in BATCHES:
        p = serving_point(H100, LLAMA_8B, B, 1024, 256, 1, 8192, "FP8", "FP8", "FP8")
        assert p.first_token_s >= 1.5 * p.step_s * (1 - 1e-12)


def test_a_batch_whose_arriving_prompts_overflow_the_step_budget_is_no_steady_state():
    """512 sequences with prompts 16 times their answers bring 8,192 prompt tokens a step, beside
    512 decode tokens: more than a budget of 8,192."""
    over = serving_point(H100, LLAMA_8B, 512, 1024, 64, 1, 8192, "FP8", "FP8", "FP8")
    under = serving_point(H100, LLAMA_8B, 256, 1024, 64, 1, 8192, "FP8", "FP8", "FP8")
    assert over.fits and not over.keeps_up and not over.steady
    assert under.keeps_up and under.steady


def test_the_step_budget_must_hold_the_batch():
    with pytest.raises(ValueError, match="step_tokens"):
        serving_point(H100, LLAMA_8B, 8192, 1024, 256, 1, 8192)


# ---- measured reality bounds the links ----------------------------------------------------------

def test_no_ring_all_reduce_beats_its_link():
    """A ring's bus bandwidth is bytes each GPU sends one way per second: never above the link's
    one-way figure (NVLink SHARP rows are not rings)."""
    rows = datafiles.load("collectives.toml")["allreduce"]
    assert rows
    for r in rows:
        if "busbw_gb_s" not in r:
            continue
        link = accelerator(r["system"]).link
        assert "NVLS" not in r["algorithm"].replace("NVLS off", "")
        assert r["busbw_gb_s"] * GB <= link.bytes_per_s_among(r["gpus"]), r["system"]


def test_the_assumed_latency_is_no_slower_than_a_measured_general_all_reduce():
    rows = [r for r in datafiles.load("collectives.toml")["allreduce"] if "small_us" in r]
    assert rows
    for r in rows:
        assert collective_latency_s(accelerator(r["system"]).link.kind, r["gpus"]) <= r["small_us"] * 1e-6, r["system"]


def test_an_idle_math_unit_is_never_the_wall_of_a_small_tensor_parallel_step():
    assert tensor_parallel_on(H100, LLAMA_70B, 4, 1, 1024).wall != COMPUTE_BOUND
    assert math.isfinite(tensor_parallel_on(H100, LLAMA_70B, 4, 1, 1024).per_user)


# ---- acceptance: the book's conditional rate against engines' accepted / drafted share ----------

def test_draft_acceptance_rate_of_the_books_example():
    """a = 0.7, k = 4: (0.7 + 0.49 + 0.343 + 0.2401) / 4 = 0.443, what vLLM logs as its draft
    acceptance rate; its mean acceptance length is the book's tokens per round, 2.77."""
    from inferlimits.arithmetic.speculative import draft_acceptance_rate
    assert draft_acceptance_rate(0.7, 4) == pytest.approx((0.7 + 0.7**2 + 0.7**3 + 0.7**4) / 4, rel=1e-12)
    assert draft_acceptance_rate(0.7, 4) == pytest.approx(0.443275, abs=1e-6)
    assert 1 + 4 * draft_acceptance_rate(0.7, 4) == pytest.approx(expected_tokens_per_step(0.7, 4), rel=1e-12)


@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_draft_acceptance_rate_at_the_ends_and_for_one_token(k):
    from inferlimits.arithmetic.speculative import draft_acceptance_rate
    assert draft_acceptance_rate(0.0, k) == 0.0
    assert draft_acceptance_rate(1.0, k) == 1.0
    assert draft_acceptance_rate(0.63, 1) == pytest.approx(0.63, rel=1e-12)   # one draft token: the two agree


@given(a=st.floats(0.0, 1.0), k=st.integers(1, 16))
def test_accepted_over_drafted_never_exceeds_the_conditional_rate(a, k):
    from inferlimits.arithmetic.speculative import draft_acceptance_rate
    assert draft_acceptance_rate(a, k) <= a + 1e-12


@given(a=st.floats(0.0, 1.0), k=st.integers(1, 16))
def test_acceptance_from_draft_rate_inverts_draft_acceptance_rate(a, k):
    from inferlimits.arithmetic.speculative import acceptance_from_draft_rate, draft_acceptance_rate
    assert acceptance_from_draft_rate(draft_acceptance_rate(a, k), k) == pytest.approx(a, abs=1e-9)


def test_acceptance_from_draft_rate_rejects_a_share_above_one():
    from inferlimits.arithmetic.speculative import acceptance_from_draft_rate
    with pytest.raises(ValueError, match="draft_rate"):
        acceptance_from_draft_rate(1.2, 4)
    with pytest.raises(ValueError, match="draft_tokens"):
        acceptance_from_draft_rate(0.4, 0)


# ---- one NVLink domain, whatever its size -------------------------------------------------------

def test_link_domains():
    from inferlimits.arithmetic.parallel import SERVER_GPUS, link_domain_gpus
    racks = ("B200 (GB200)", "B300 (GB300)")   # the NVL72 racks' parts
    assert all(link_domain_gpus(accelerator(n)) == 72 for n in racks)
    assert all(link_domain_gpus(a) == SERVER_GPUS == 8 for n, a in accelerators().items() if n not in racks)
    assert all(T <= SERVER_GPUS for T in (1, 2, 4, 8))


def test_wider_expert_parallelism_in_an_nvl72_rack_reads_less_per_gpu():
    """The same sequences per GPU, experts spread over 64 GPUs of a GB200 NVL72 rather than 8:
    each GPU holds and reads fewer experts, so its step is shorter and it makes more tokens."""
    gb200 = accelerator("B200 (GB200)")
    narrow = expert_parallel_on(gb200, DEEPSEEK, 8, 8 * 32, 4096, "FP8", "BF16", "FP8")
    wide = expert_parallel_on(gb200, DEEPSEEK, 64, 64 * 32, 4096, "FP8", "BF16", "FP8")
    assert narrow.fits and wide.fits
    assert wide.weight_bytes_per_gpu < narrow.weight_bytes_per_gpu
    assert wide.cache_bytes_per_gpu == pytest.approx(narrow.cache_bytes_per_gpu, rel=1e-12)
    assert wide.memory_s < narrow.memory_s and wide.per_gpu > narrow.per_gpu
    assert wide.communication_s > narrow.communication_s   # each token goes to more GPUs


def test_an_nvl72_racks_trays_hold_its_whole_nvlink_domain():
    from inferlimits.arithmetic.parallel import NVL72_COMPUTE_TRAYS, NVL72_GPUS_PER_TRAY, link_domain_gpus
    assert NVL72_COMPUTE_TRAYS * NVL72_GPUS_PER_TRAY == link_domain_gpus(accelerator("B200 (GB200)"))


def test_the_expert_layouts_table_gives_each_width_its_step_at_both_exchange_times():
    """One row per GPU count: the book's exchanges and DeepEP's measured ones; a width the data has
    no measurement for shows a dash rather than a number."""
    from inferlimits.figures.serving import expert_layouts
    gb200 = accelerator("B200 (GB200)")
    text = expert_layouts("DeepSeek-V3", "B200 (GB200)", (8, 64, 32), 32, 4096).data
    lines = text.splitlines()
    assert len(lines) == 2 + 3
    for G, line in zip((8, 64), lines[2:]):
        book = expert_parallel_on(gb200, DEEPSEEK, G, 32 * G, 4096, "FP8", "BF16", "FP8")
        seen = expert_parallel_on(gb200, DEEPSEEK, G, 32 * G, 4096, "FP8", "BF16", "FP8",
                                  exchange_s=sum(measured_exchanges_s(G)) / 2)
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == str(G)
        assert cells[4] == f"{book.per_user:,.1f}" and cells[6] == f"{seen.per_user:,.1f}"
        assert seen.communication_s > book.communication_s
    assert lines[-1].count("–") == 2


def test_the_spreads_table_gives_each_scheme_its_collectives_and_time_per_token():
    """One row per scheme: the collectives of a step (2 n + 2 for tensor, one send for a pipeline,
    2 n_moe for expert, none for replicas) and the time between two tokens of one sequence, which
    for a pipeline is its stages' turns; a scheme that does not fit shows no times; an unknown
    scheme is a ValueError naming the parameter."""
    from inferlimits.arithmetic.parallel import moe_layers, pipeline_on
    from inferlimits.figures.serving import spreads
    h100, h200 = accelerator("H100 SXM"), accelerator("H200 SXM")
    llama = model("Llama-3.1-70B").config
    lines = spreads("Llama-3.1-70B", "H100 SXM", 4, 64, 4096).data.splitlines()
    assert len(lines) == 2 + 3
    tensor, pipe, data = ([c.strip() for c in line.strip("|").split("|")] for line in lines[2:])
    tp = tensor_parallel_on(h100, llama, 4, 64, 4096, "FP8", "FP8", "FP8")
    pp = pipeline_on(h100, llama, 4, 64, 4096, weight_precision="FP8", kv_precision="FP8", math_precision="FP8")
    assert tensor[4] == str(2 * llama.num_hidden_layers + 2) and tensor[6] == f"{tp.step_s * 1e3:,.1f}"
    assert pipe[4] == "1" and pipe[6] == f"{pp.token_interval_s * 1e3:,.1f}"
    assert pp.token_interval_s == pytest.approx(pp.rounds * pp.step_s) and pp.rounds == 4
    assert data[2] == "does not fit" and data[4] == "0" and data[6] == ""
    rows = spreads("DeepSeek-V3", "H200 SXM", 8, 256, 4096, ("tensor", "expert", "expert, DeepEP's times"),
                   "FP8", "BF16", "FP8").data.splitlines()[2:]
    tensor, book, seen = ([c.strip() for c in line.strip("|").split("|")] for line in rows)
    assert tensor[2] == "does not fit"
    assert book[4] == seen[4] == str(2 * moe_layers(DEEPSEEK))
    measured = expert_parallel_on(h200, DEEPSEEK, 8, 256, 4096, "FP8", "BF16", "FP8",
                                  exchange_s=sum(measured_exchanges_s(8)) / 2)
    assert seen[5] == f"{measured.communication_s * 1e3:,.2f}" and float(seen[5]) > float(book[5])
    with pytest.raises(ValueError, match="schemes"):
        spreads("Llama-3.1-70B", "H100 SXM", 4, 64, 4096, ("ring",))
