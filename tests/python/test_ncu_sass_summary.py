"""bench/cuda/ncu_sass_summary.py splits a kernel's warp-state samples by execution count
and by runs of instructions; checked on a hand-made source page whose answers are known
(two kernels, a predicated instruction, an empty sample cell)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "cuda"))
import ncu_sass_summary as nss  # noqa: E402

HEADER = ('"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed",'
          '"stall_barrier","stall_long_sb"')
PAGE = "\n".join([
    '"Kernel Name","main_loop_kernel",',
    HEADER,
    '"0x10","S2R R0, SR_TID.X","","8","0","0"',
    '"0x20","HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4], R24","30","64","0","10"',
    '"0x30","WARPGROUP.DEPBAR.LE gsb0, 0x1","50","64","45","0"',
    '"0x40","@!P0  BRA 0x20","10","64","0","9"',
    '"0x50","STG.E.128 desc[UR6][R2.64], R4","10","8","0","7"',
    '"Kernel Name","other_kernel",',
    HEADER,
    '"0x10","EXIT","4","4","0","0"',
    "",
])


def write_page(tmp_path):
    p = tmp_path / "sass.csv"
    p.write_text(PAGE)
    return str(p)


def test_blocks_and_groups(tmp_path):
    blocks = nss.read_blocks(write_page(tmp_path))
    assert [b["name"] for b in blocks] == ["main_loop_kernel", "other_kernel"]
    b = nss.Block(blocks[0])
    assert b.total == 100.0
    groups = nss.by_execution_count(b)
    assert groups[64.0] == [90.0, 3, 192.0]  # the loop: three instructions, 90% of samples
    assert groups[8.0] == [10.0, 2, 16.0]
    assert nss.runs(b) == [[0, 0, 8.0, 0.0], [1, 3, 64.0, 90.0], [4, 4, 8.0, 10.0]]
    assert b.opcode(b.rows[3]) == "BRA"  # the predicate guard skipped
    assert b.top_stalls(b.rows[2]) == "barrier:45"


def test_cli(tmp_path, capsys):
    page = write_page(tmp_path)
    assert nss.main([page, "--list"]) == 0
    assert "1: other_kernel (1 instructions, 4 samples)" in capsys.readouterr().out
    assert nss.main([page, "--kernel", "0", "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "[1-3] count 64:  90.0%" in out and "WARPGROUP.DEPBAR" in out
    assert nss.main([page, "--kernel", "0", "--range", "1", "3"]) == 0
    out = capsys.readouterr().out
    assert "instructions 1-3: 90.0% of the samples" in out and "barrier 45.0%" in out
    assert nss.main([page, "--kernel", "2"]) == 1
