"""A list-scheduling model of a causal forward dispatch: which block order ends soonest.

Each workgroup takes one free slot (an SM running one workgroup) in dispatch order, as GPUs
start workgroups in about that order, and holds it for a time proportional to the key tiles its
query block visits (plus half a tile of fixed cost). The makespan against the ideal (total work
spread evenly over the slots) is the share of the dispatch lost to its last wave. The model knows
nothing of caches: it cannot tell why all pairs as one group ran slower at d = 64 (call 2).

    python3 schedule_model.py
"""
import heapq


def makespan(works, slots):
    free = [0.0] * slots
    for w in works:
        heapq.heappush(free, heapq.heappop(free) + w)
    return max(free)


def orders(pairs, blocks, work, slots):
    """Block lengths in dispatch order, per ordering."""
    each_head_desc = [work(blocks - 1 - x) for _ in range(pairs) for x in range(blocks)]
    each_head_asc = [work(x) for _ in range(pairs) for x in range(blocks)]
    # Groups as the tensor-core kernel forms them (plan::banded_groups, two waves a group).
    groups = max(1, min(pairs, pairs * blocks // (2 * slots)))
    small, larger = divmod(pairs, groups)
    grouped = []
    for g in range(groups):
        size = small + (1 if g < larger else 0)
        for rank in range(blocks):
            grouped += [work(blocks - 1 - rank)] * size
    return {
        "each head, shortest first (portable tier)": each_head_asc,
        "each head, longest first (tensor cores before)": each_head_desc,
        "all pairs, longest first": sorted(each_head_desc, reverse=True),
        f"{groups} groups, longest first (tensor cores now)": grouped,
    }


if __name__ == "__main__":
    slots = 132  # H200 SMs, one tensor-core workgroup each
    # (N, block_m, block_n, pairs): the shapes of the FlashAttention papers at d = 128, 64, 256
    for n, bm, bn, pairs in [(8192, 128, 64, 32), (8192, 128, 128, 64), (8192, 128, 32, 16),
                             (2048, 128, 64, 128), (4096, 128, 64, 64), (16384, 128, 64, 16)]:
        blocks = n // bm

        def work(i):
            return (i + 1) * bm / bn + 0.5

        ideal = sum(work(i) for i in range(blocks)) * pairs / slots
        print(f"N={n} tiles {bm}x{bn}, {pairs} (batch, head) pairs, {blocks} blocks each")
        for name, works in orders(pairs, blocks, work, slots).items():
            print(f"  {name}: {makespan(works, slots) / ideal - 1:+.1%} over the ideal")
