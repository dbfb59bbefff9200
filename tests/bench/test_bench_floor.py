"""bench/bench.py's floor on a missed target's line (Bench.floor_note): every Conv/Gemm FLOP at
the core's peak plus the other nodes' profiled time, over the row's threads, against ONNX
Runtime's median of turn medians; its verdict where that is beyond the target. Checked against
the figures worked out by hand from the definition."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import bench  # noqa: E402


def floor_bench(gflops):
    b = object.__new__(bench.Bench)  # (no run: only the profile and the peak)
    b.peak_gflops = 100.0
    # 20 GFLOP in 250 ms of Conv/Gemm nodes, 300 ms in all nodes: at 100 GFLOP/s the products
    # take 200 ms, the other nodes stay 50 ms
    b.profiles = {"m": {"flops": 20e9, "flop_ns": 250e6, "total_ns": 300e6, "gflops": gflops}}
    return b


class FloorNoteTest(unittest.TestCase):
    def test_beyond_the_target(self):
        # 250 ms against ONNX Runtime's median of turn medians 300 ms (290, 300, 310): 0.833x
        note = floor_bench(80.0).floor_note({"model": "m", "threads": 1}, 0.8,
                                            {("m", 1): [(0, 310.0), (1, 290.0), (2, 300.0)]})
        self.assertEqual(note, "; at peak on every Conv/Gemm FLOP: 250.00 ms, 0.833x ONNX "
                               "Runtime's median (beyond the target: faster Conv/Gemm kernels "
                               "alone cannot meet it)")

    def test_threads_within_the_target(self):
        # 2 threads without loss: 125 ms against 200 ms, 0.625x: no verdict
        note = floor_bench(80.0).floor_note({"model": "m", "threads": 2}, 0.8,
                                            {("m", 2): [(0, 200.0)]})
        self.assertEqual(note, "; at peak on every Conv/Gemm FLOP: 125.00 ms, 0.625x ONNX "
                               "Runtime's median")

    def test_winograd_is_not_a_floor(self):
        # a rate past the peak (Winograd counted at its direct FLOPs): no verdict of reach
        note = floor_bench(120.0).floor_note({"model": "m", "threads": 1}, 0.8,
                                             {("m", 1): [(0, 300.0)]})
        self.assertTrue(note.endswith("(its Winograd convolutions need fewer FLOPs: not a floor)"))

    def test_nothing_without_onnx_runtime_or_profile(self):
        b = floor_bench(80.0)
        self.assertEqual(b.floor_note({"model": "m", "threads": 1}, 0.8, {}), "")
        self.assertEqual(b.floor_note({"model": "x", "threads": 1}, 0.8,
                                      {("x", 1): [(0, 1.0)]}), "")


if __name__ == "__main__":
    unittest.main()
