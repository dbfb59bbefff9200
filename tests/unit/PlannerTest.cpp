// The reference backend's arena planner on hand-checkable cases (planner.c's header comment).
extern "C" {
#include "ref.h"
}

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

ref_buffer buffer(size_t units, int first, int last, size_t *offset) {
  ref_buffer b{};
  b.size = units * REF_ALIGN;
  b.first = first;
  b.last = last;
  b.offset = offset;
  return b;
}

// Pseudo-random plans: up to `most` buffers of 1 to 9 units, first used at a node below
// `nodes` and alive up to 7 nodes more, each storing its offset in off (resized to fit).
struct RandomPlans {
  unsigned seed;
  unsigned next(unsigned mod) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % mod;
  }
  std::vector<ref_buffer> make(unsigned most, unsigned nodes, std::vector<size_t> &off) {
    const int n = 1 + static_cast<int>(next(most));
    std::vector<ref_buffer> bufs;
    off.assign(static_cast<size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      int first = static_cast<int>(next(nodes));
      bufs.push_back(buffer(1 + next(9), first, first + static_cast<int>(next(8)),
                            &off[static_cast<size_t>(i)]));
      bufs.back().order = i;
    }
    return bufs;
  }
};

TEST(Planner, WorkedExampleFromTheHeader) {
  size_t a = 0, b = 0, c = 0;
  ref_buffer bufs[] = {buffer(2, 0, 1, &a), buffer(1, 1, 2, &b), buffer(2, 2, 3, &c)};
  for (int i = 0; i < 3; ++i)
    bufs[i].order = i;
  EXPECT_EQ(ref_plan_buffers(bufs, 3, nullptr), 3u * REF_ALIGN);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(c, 0u);
  EXPECT_EQ(b, 2u * REF_ALIGN);
}

TEST(Planner, OverlappingLifetimesNeverShareBytes) {
  size_t off[4] = {};
  ref_buffer bufs[] = {buffer(3, 0, 3, &off[0]), buffer(1, 1, 1, &off[1]), buffer(2, 2, 4, &off[2]),
                       buffer(1, 4, 5, &off[3])};
  for (int i = 0; i < 4; ++i)
    bufs[i].order = i;
  size_t arena = ref_plan_buffers(bufs, 4, nullptr);
  // Largest first: 0 at 0; 2 overlaps 0 (nodes 2-3) so it goes above it, at 3; 1 overlaps
  // only 0, so it also goes at 3 (2 is not live at node 1); 3 overlaps only 2, so it takes 0.
  EXPECT_EQ(arena, 5u * REF_ALIGN);
  EXPECT_EQ(off[0], 0u);
  EXPECT_EQ(off[2], 3u * REF_ALIGN);
  EXPECT_EQ(off[1], 3u * REF_ALIGN);
  EXPECT_EQ(off[3], 0u);
}

// planner.c's second worked example: largest first (order a) would leave C above B at 5
// (7 units); placing by first use (order b) reaches the bound, A + B at node 0.
TEST(Planner, FirstUseOrderWinsWhereLargestFirstFragments) {
  size_t a = 0, b = 0, c = 0, d = 0;
  ref_buffer bufs[] = {buffer(3, 0, 0, &a), buffer(2, 0, 1, &b), buffer(2, 1, 2, &c),
                       buffer(3, 2, 2, &d)};
  for (int i = 0; i < 4; ++i)
    bufs[i].order = i;
  EXPECT_EQ(ref_plan_buffers(bufs, 4, nullptr), 5u * REF_ALIGN);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 3u * REF_ALIGN);
  EXPECT_EQ(c, 0u);
  EXPECT_EQ(d, 2u * REF_ALIGN);
}

// Node loads: 0: C + D = 5, 1: A + C = 4, 2: A + B + C = 6, 3: A + B = 4. Largest first
// puts D at 0, C at 3, A at 0 and B (live with A and C) at 5: 7 units; first use does the
// same. By pressure (order c) A, B and C (pressure 6, the busiest node) go first, C A B at 0,
// 2, 4, and D (pressure 5) fits above C at 2 because A and B are not yet live at node 0:
// 6 units, the bound.
TEST(Planner, PressureOrderPacksTheBusiestNodeFirst) {
  size_t a = 0, b = 0, c = 0, d = 0;
  ref_buffer bufs[] = {buffer(2, 1, 3, &a), buffer(2, 2, 4, &b), buffer(2, 0, 2, &c),
                       buffer(3, 0, 0, &d)};
  for (int i = 0; i < 4; ++i)
    bufs[i].order = i;
  EXPECT_EQ(ref_plan_buffers(bufs, 4, nullptr), 6u * REF_ALIGN);
  EXPECT_EQ(c, 0u);
  EXPECT_EQ(a, 2u * REF_ALIGN);
  EXPECT_EQ(b, 4u * REF_ALIGN);
  EXPECT_EQ(d, 2u * REF_ALIGN);
}

TEST(Planner, EmptyPlanIsZero) { EXPECT_EQ(ref_plan_buffers(nullptr, 0, nullptr), 0u); }

// Random lifetimes and sizes: buffers alive at one node never share a byte, every offset is
// aligned, and the arena holds every buffer and at least the most bytes alive at one node.
TEST(Planner, RandomPlansKeepLiveBuffersApart) {
  RandomPlans plans{7};
  for (int round = 0; round < 50; ++round) {
    std::vector<size_t> off;
    std::vector<ref_buffer> bufs = plans.make(120, 40, off);
    const int n = static_cast<int>(bufs.size());
    size_t arena = ref_plan_buffers(bufs.data(), n, nullptr), most = 0;
    for (int node = 0; node < 48; ++node) {
      size_t live = 0;
      for (const ref_buffer &b : bufs)
        live += b.first <= node && node <= b.last ? b.size : 0;
      most = std::max(most, live);
    }
    EXPECT_GE(arena, most) << "round " << round;
    for (int i = 0; i < n; ++i) {
      const ref_buffer &a = bufs[static_cast<size_t>(i)];
      EXPECT_EQ(*a.offset % REF_ALIGN, 0u);
      EXPECT_LE(*a.offset + a.size, arena) << "round " << round << " buffer " << i;
      for (int j = 0; j < i; ++j) {
        const ref_buffer &b = bufs[static_cast<size_t>(j)];
        if (a.first <= b.last && b.first <= a.last) {
          EXPECT_TRUE(*a.offset + a.size <= *b.offset || *b.offset + b.size <= *a.offset)
              << "round " << round << ": buffers " << j << " and " << i << " overlap";
        }
      }
    }
  }
}

// The lists from a scratch (ODLA_EXT_ITEM_COMPILE_SCRATCH), whole, in part (what does not
// fit from the heap) or none of them, place every buffer as the heap's do; a scratch that holds
// them is used (its cursor moves) and nothing is written past its end.
TEST(Planner, ScratchListsPlanAsTheHeapsDo) {
  RandomPlans plans{11};
  for (int round = 0; round < 20; ++round) {
    std::vector<size_t> want, got;
    std::vector<ref_buffer> a = plans.make(60, 30, want), b = a;
    const int n = static_cast<int>(a.size());
    got.assign(want.size(), 0);
    for (int i = 0; i < n; ++i)
      b[static_cast<size_t>(i)].offset = &got[static_cast<size_t>(i)];
    const size_t arena = ref_plan_buffers(a.data(), n, nullptr);
    for (size_t room : {size_t{0}, size_t{100}, size_t{400}, size_t{1} << 16}) {
      std::vector<unsigned char> scratch(room + 64, 0xA5);
      ref_temp temp = {scratch.data(), scratch.data(), scratch.data() + room};
      EXPECT_EQ(ref_plan_buffers(b.data(), n, &temp), arena) << "round " << round;
      EXPECT_EQ(got, want) << "round " << round << ", " << room << " bytes of scratch";
      if (room == size_t{1} << 16) {
        EXPECT_GT(temp.at, scratch.data());
      }
      for (size_t k = room; k < scratch.size(); ++k)
        ASSERT_EQ(scratch[k], 0xA5) << "written past the scratch";
    }
  }
}

} // namespace
