"""A host model of the dx epilogue kernel's synchronization (src/cuda/dx_epilogue_sm90.cu on
branch s45-dx-xs3), written in a session that had no GPU: do the ring's and the x buffers'
barriers, the warpgroups' turns and (CL) the cluster's remote arrivals order every load and
every read, in XS, XS3 and both with clusters, without a hang?

    python3 protocol_model.py [--runs 300] [--seed 1]

Each CTA's actors follow the kernel's loops step by step: the ring's producer (thread 0),
XS3's x loader (thread 32) and the two consumer warpgroups (their four warps' arrivals
counted as four). A random scheduler interleaves them and the TMA transfers, which land at
random later steps. mbarriers as the PTX ISA gives them: an arrival count and a transaction
count a phase, a phase completing when both reach zero, a parity wait passing once the phase
of that parity has completed (a fresh barrier's parity-1 wait passes at once). Named
barriers: 256 threads, two warpgroups. Checked:
  - every consumer reads, from each ring stage it waits for, the dy rows of its own tile and
    both halves of the W^T slice of its unit and slice, and from its x buffer its tile's x;
  - no TMA write lands in a stage or x buffer that a consumer is still reading;
  - no remote arrival reaches a CTA whose producer has exited;
  - every tile is computed once, and the run ends (a state with nothing runnable is a hang).
It models the order of events only, not their data: a wrong index in the kernel that the
model does not share would pass here. Stated again in Python (not shared code), so the
model and the kernel can drift: this is session 45's desk check, not a test of record.
"""
import argparse
import random


def tile_at(b, tiles_m, tiles_n, bn, bm):
    group_m = 16
    per_group = group_m * tiles_n
    first_m = b // per_group * group_m
    rows = min(tiles_m - first_m, group_m)
    return (first_m + (b % per_group) % rows) * bm, (b % per_group) // rows * bn


class Bar:
    def __init__(self, count):
        self.count, self.pending, self.tx, self.phase = count, count, 0, 0

    def arrive(self):
        self.pending -= 1
        assert self.pending >= 0, "more arrivals than the barrier's count"
        self._maybe_complete()

    def complete_tx(self, n):
        self.tx -= n
        self._maybe_complete()

    def _maybe_complete(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count

    def passed(self, parity):
        return (self.phase & 1) != parity


class Fail(Exception):
    pass


def simulate(form, cl, M, K, N, grid, rng):
    xs3 = form == "xs3"
    S = 3 if xs3 else 4
    XB = 3 if xs3 else 2
    TM, BN, BK = 64, 256, 64
    tiles_m, tiles_n = -(-M // TM), -(-K // BN)
    KT = -(-N // BK)
    pairs_m = (tiles_m + 1) // 2
    units = pairs_m * tiles_n if cl else tiles_m * tiles_n
    if cl:
        grid -= grid % 2
    ctas = list(range(grid))
    ustep = grid // 2 if cl else grid

    def unit0(c):
        return c // 2 if cl else c

    def rank(c):
        return c % 2 if cl else 0

    def tile_of(c, u):
        if cl:
            m0, n0 = tile_at(u, pairs_m, tiles_n, BN, 2 * TM)
            return m0 + rank(c) * TM, n0
        return tile_at(u, tiles_m, tiles_n, BN, TM)

    full = {c: [Bar(1) for _ in range(S)] for c in ctas}
    empty = {c: [Bar(4 * (2 if cl else 1)) for _ in range(S)] for c in ctas}
    xfull = {c: [Bar(1) for _ in range(XB)] for c in ctas}
    xempty = {c: [Bar(4) for _ in range(XB)] for c in ctas}
    named = {c: {b: 0 for b in (4, 5)} for c in ctas}  # warpgroup arrivals pending a sync
    stage_a = {c: [None] * S for c in ctas}
    stage_b = {c: [[None, None] for _ in range(S)] for c in ctas}
    xbuf = {c: [None] * XB for c in ctas}
    reading = {c: {"stage": [0] * S, "x": [0] * XB} for c in ctas}
    exited = set()
    done_tiles = []
    transfers = []  # (c, kind, index, half, tag, bar) landing later

    def peer(c):
        return c ^ 1

    def tma(c, kind, idx, half, tag, bar):
        transfers.append((c, kind, idx, half, tag, bar))

    def producer(c):
        it = 0
        for j, u in enumerate(range(unit0(c), units, ustep)):
            m0, n0 = tile_of(c, u)
            pre = min(KT, S) if form == "xs" else KT
            for kt in range(KT):
                if form == "xs" and kt == pre:
                    yield from load_x(c, j, u)
                s = it % S
                while not empty[c][s].passed(((it // S) & 1) ^ 1):
                    yield "wait"
                full[c][s].tx += 3 if cl else 2  # A, and B whole or (CL) its two halves
                full[c][s].arrive()
                tma(c, "a", s, 0, (c, u, kt), full[c][s])
                if cl:
                    for dst in (c, peer(c)):
                        tma(dst, "b", s, rank(c), (u, kt), full[dst][s])
                else:
                    tma(c, "b", s, None, (u, kt), full[c][s])
                it += 1
                yield "step"
            if form == "xs" and pre == KT:
                yield from load_x(c, j, u)
        if cl:
            for v in range(max(it - S, 0), it):
                while not empty[c][v % S].passed((v // S) & 1):
                    yield "wait"
        exited.add(c)

    def load_x(c, j, u):
        w, use = j % XB, j // XB
        if use > 0:
            while not xempty[c][w].passed((use - 1) & 1):
                yield "wait"
        xfull[c][w].tx += 1
        xfull[c][w].arrive()
        tma(c, "x", w, None, (c, u), xfull[c][w])
        yield "step"

    def xloader(c):
        for j, u in enumerate(range(unit0(c), units, ustep)):
            yield from load_x(c, j, u)

    def release(c, s):
        for _ in range(4):
            empty[c][s].arrive()
            if cl:
                if peer(c) in exited:
                    raise Fail(f"remote arrival on CTA {peer(c)} after its producer exited")
                empty[peer(c)][s].arrive()

    def consumer(c, cw):
        it0, j = cw * KT, cw
        u = unit0(c) + cw * ustep
        while u < units:
            first, more = u == unit0(c), u + ustep < units
            if cw == 1 or not first:  # named_bar_sync(4 + cw): wait for the other's arrival
                while named[c][4 + cw] == 0:
                    yield "wait"
                named[c][4 + cw] -= 1
            for kt in range(KT):
                s = (it0 + kt) % S
                while not full[c][s].passed(((it0 + kt) // S) & 1):
                    yield "wait"
                reading[c]["stage"][s] += 1
                want_b = [(u, kt), (u, kt)] if cl else [(u, kt), None]
                got_b = stage_b[c][s] if cl else [stage_b[c][s][0], None]
                if stage_a[c][s] != (c, u, kt) or got_b != want_b:
                    raise Fail(f"CTA {c} wg {cw} unit {u} slice {kt} read stage {s}: "
                               f"A {stage_a[c][s]} B {got_b}")
                yield "step"
                if kt > 0:
                    ps = (it0 + kt - 1) % S
                    reading[c]["stage"][ps] -= 1
                    release(c, ps)
            if more:  # named_bar_arrive(5 - cw)
                if named[c][5 - cw]:
                    raise Fail(f"CTA {c}: a second arrival on named barrier {5 - cw} before its sync")
                named[c][5 - cw] += 1
            ls = (it0 + KT - 1) % S
            reading[c]["stage"][ls] -= 1
            release(c, ls)
            xb, xuse = j % XB, j // XB
            while not xfull[c][xb].passed(xuse & 1):
                yield "wait"
            if xbuf[c][xb] != (c, u):
                raise Fail(f"CTA {c} wg {cw} unit {u} read x buffer {xb}: {xbuf[c][xb]}")
            reading[c]["x"][xb] += 1
            yield "step"
            m0, n0 = tile_of(c, u)
            if m0 < M:
                done_tiles.append((m0, n0))
            reading[c]["x"][xb] -= 1
            for _ in range(4):
                xempty[c][xb].arrive()
            it0 += 2 * KT
            j += 2
            u += 2 * ustep

    actors = []
    for c in ctas:
        actors.append(producer(c))
        if xs3:
            actors.append(xloader(c))
        actors += [consumer(c, 0), consumer(c, 1)]
    live = list(actors)
    stalls = 0
    while live or transfers:
        if transfers and (not live or rng.random() < 0.3):
            c, kind, idx, half, tag, bar = transfers.pop(rng.randrange(len(transfers)))
            if kind == "x":
                if reading[c]["x"][idx]:
                    raise Fail(f"x load into CTA {c} buffer {idx} while it is read")
                xbuf[c][idx] = tag
            else:
                if reading[c]["stage"][idx]:
                    raise Fail(f"TMA write into CTA {c} stage {idx} while it is read")
                if kind == "a":
                    stage_a[c][idx] = tag
                elif half is None:
                    stage_b[c][idx] = [tag, tag]
                else:
                    stage_b[c][idx][half] = tag
            bar.complete_tx(1)
            stalls = 0
            continue
        a = rng.choice(live)
        try:
            r = next(a)
        except StopIteration:
            live.remove(a)
            stalls = 0
            continue
        stalls = stalls + 1 if r == "wait" else 0
        if stalls > 50 * (len(live) + 1) and not transfers:
            # every live actor waited many times in a row with nothing in flight
            if all(next_is_wait(x) for x in list(live)):
                raise Fail(f"hang: {len(live)} actors waiting, nothing in flight")
            stalls = 0
    want = sorted({tile_at(b, tiles_m, tiles_n, BN, TM) for b in range(tiles_m * tiles_n)})
    if sorted(done_tiles) != want:
        raise Fail(f"tiles computed {len(done_tiles)}, want {len(want)} once each")


def next_is_wait(gen):
    """Step one actor once more: 'wait' again means it is still blocked (a blocked actor's
    step changes nothing, so stepping it is harmless)."""
    try:
        return next(gen) == "wait"
    except StopIteration:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    # M, K, N, grid: the branch's table rows (F_DX_FEW_CTAS on 5 CTAs) and a few more,
    # N from one slice (KT = 1, under every ring) to 5 (past the 4-stage ring)
    shapes = [(600, 1032, 200, 5), (600, 1032, 264, 5), (650, 1032, 200, 5),
              (650, 1032, 264, 5), (300, 1032, 72, 4), (1000, 520, 64, 6),
              (130, 264, 320, 3), (64, 256, 256, 2), (700, 768, 136, 7)]
    n = 0
    for form in ("xs", "xs3"):
        for cl in (False, True):
            for (M, K, N, grid) in shapes:
                for _ in range(max(1, args.runs // len(shapes))):
                    simulate(form, cl, M, K, N, grid, rng)
                    n += 1
            print(f"{form}{' + CL' if cl else ''}: passed")
    print(f"{n} runs, every form: passed")


if __name__ == "__main__":
    main()
