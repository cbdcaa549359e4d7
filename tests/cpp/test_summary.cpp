// Statistics as numpy computes them (STD is the sample std, ddof=1, as Statistic.STD), the ring
// buffer, and the engine's summaries() table.
#include <cmath>
#include <vector>

#include "doctest/doctest.h"
#include "rig.h"
#include "timing/duration_ring.h"
#include "timing/summary.h"

using straggler::kAvg;
using straggler::kMax;
using straggler::kMed;
using straggler::kMin;
using straggler::kNum;
using straggler::kNumColumns;
using straggler::kStd;
using straggler::kTotal;

namespace {

std::vector<double> row_of(std::vector<double> samples) {
  std::vector<double> row(kNumColumns);
  straggler::summarize(samples, row.data());
  return row;
}

}  // namespace

TEST_CASE("summarize: min, max, mean, total, count") {
  const auto row = row_of({4.0, 1.0, 3.0, 2.0});
  CHECK(row[kMin] == 1.0);
  CHECK(row[kMax] == 4.0);
  CHECK(row[kAvg] == doctest::Approx(2.5));
  CHECK(row[kTotal] == doctest::Approx(10.0));
  CHECK(row[kNum] == 4.0);
}

TEST_CASE("summarize: the median averages the two middle values of an even count") {
  CHECK(row_of({4.0, 1.0, 3.0, 2.0})[kMed] == doctest::Approx(2.5));
  CHECK(row_of({5.0, 1.0, 3.0})[kMed] == 3.0);
  CHECK(row_of({7.0, 7.0, 1.0, 9.0, 7.0, 2.0})[kMed] == 7.0);
}

TEST_CASE("summarize: STD is the sample standard deviation (ddof=1)") {
  // mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5: sqrt(5 / 3), not sqrt(5 / 4).
  CHECK(row_of({1.0, 2.0, 3.0, 4.0})[kStd] == doctest::Approx(std::sqrt(5.0 / 3.0)));
  CHECK(row_of({2.0, 2.0, 2.0})[kStd] == 0.0);
  CHECK(std::isnan(row_of({3.0})[kStd]));  // one sample: undefined, as numpy.std(ddof=1)
}

TEST_CASE("summarize: no samples gives NaN statistics, a zero count and total") {
  const auto row = row_of({});
  CHECK(std::isnan(row[kMin]));
  CHECK(std::isnan(row[kMed]));
  CHECK(std::isnan(row[kStd]));
  CHECK(row[kNum] == 0.0);
  CHECK(row[kTotal] == 0.0);
}

TEST_CASE("the ring grows up to its capacity, then overwrites the oldest") {
  straggler::DurationRing ring(3);
  CHECK(ring.values().empty());
  ring.push(1.0);
  ring.push(2.0);
  CHECK(ring.values() == std::vector<double>{1.0, 2.0});
  for (double x : {3.0, 4.0, 5.0, 6.0, 7.0}) ring.push(x);
  CHECK(ring.size() == 3);
  CHECK(ring.values() == std::vector<double>{5.0, 6.0, 7.0});
  ring.clear();
  CHECK(ring.size() == 0);
  ring.push(8.0);
  CHECK(ring.values() == std::vector<double>{8.0});
}

TEST_CASE("summaries(): one row per timer with samples, in id order") {
  Rig rig(/*synchronous=*/true);
  auto& e = *rig.engine;
  const int a = e.timer_id("a");
  e.timer_id("unused");
  const int b = e.timer_id("b");
  for (double ms : {1.0, 2.0, 3.0, 4.0}) {
    rig.fake->set_now(0.0);
    e.start(a, 0);
    rig.fake->set_now(ms);
    e.stop(a, 0);
  }
  rig.fake->set_now(10.0);
  e.start(b, 0);
  e.stop(b, 0);
  const auto s = e.summaries();
  REQUIRE(s.names == std::vector<std::string>{"a", "b"});
  REQUIRE(s.values.size() == 2 * kNumColumns);
  CHECK(s.values[kMed] == doctest::Approx(2.5));
  CHECK(s.values[kStd] == doctest::Approx(std::sqrt(5.0 / 3.0)));
  CHECK(s.values[kNumColumns + kNum] == 1.0);
  CHECK(s.values[kNumColumns + kTotal] == doctest::Approx(0.0));  // stamped 10 .. 10
}
