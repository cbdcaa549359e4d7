// The one harvest loop on its own: which items it stores, keeps, drops and reports.
#include <stdexcept>
#include <vector>

#include "doctest/doctest.h"
#include "timing/harvest_queue.h"

using straggler::harvest_queue;
using straggler::HarvestScope;

namespace {

// Items are ints: > 0 finished, 0 running, < 0 the backend fails on it.
struct Run {
  std::vector<int> stored;
  std::vector<int> dropped;
  std::size_t count = 0;
};

// Harvests `queue` into `r` (what was stored and dropped survives a throw).
void run(std::vector<int>& queue, HarvestScope scope, Run& r) {
  r.count = harvest_queue(
      queue, scope,
      [&](int item) {
        if (item < 0) throw std::runtime_error("backend failed");
        if (item == 0) return false;
        r.stored.push_back(item);
        return true;
      },
      [&](int item) noexcept { r.dropped.push_back(item); });
}

Run run(std::vector<int>& queue, HarvestScope scope) {
  Run r;
  run(queue, scope, r);
  return r;
}

}  // namespace

TEST_CASE("kAll stores every finished item and keeps the others in order") {
  std::vector<int> q{1, 0, 2, 0, 3};
  const Run r = run(q, HarvestScope::kAll);
  CHECK(r.count == 3);
  CHECK(r.stored == std::vector<int>{1, 2, 3});
  CHECK(q == std::vector<int>{0, 0});
}

TEST_CASE("kFront stops at the first unfinished item") {
  std::vector<int> q{1, 2, 0, 3};
  const Run r = run(q, HarvestScope::kFront);
  CHECK(r.stored == std::vector<int>{1, 2});
  CHECK(q == std::vector<int>{0, 3});
}

TEST_CASE("kAll drops the failed item, keeps the rest and rethrows") {
  std::vector<int> q{1, 0, -1, 2};
  Run r;
  CHECK_THROWS_AS(run(q, HarvestScope::kAll, r), std::runtime_error);
  CHECK(r.stored == std::vector<int>{1});
  CHECK(r.dropped == std::vector<int>{-1});
  CHECK(q == std::vector<int>{0, 2});  // 2 is not looked at after the failure
}

TEST_CASE("kFront keeps the failed item and swallows the failure") {
  std::vector<int> q{1, -1, 2};
  const Run r = run(q, HarvestScope::kFront);
  CHECK(r.count == 1);
  CHECK(r.dropped.empty());
  CHECK(q == std::vector<int>{-1, 2});
}

TEST_CASE("an empty queue stores nothing") {
  std::vector<int> q;
  CHECK(run(q, HarvestScope::kAll).count == 0);
  CHECK(run(q, HarvestScope::kFront).count == 0);
}
