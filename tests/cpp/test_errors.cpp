// Backend failures: reported as CudaError, the engine stays usable, the failed pair is dropped
// (its marks discarded, not pooled), every other pair kept; nothing leaks or is freed twice.
#include <stdexcept>

#include "doctest/doctest.h"
#include "rig.h"

using fake::Op;
using straggler::CudaError;

namespace {

// `n` stopped pairs of timer `t`, all complete.
void complete_pairs(Rig& rig, int t, int n) {
  for (int i = 0; i < n; ++i) {
    rig.engine->start(t, 0);
    rig.engine->stop(t, 0);
  }
  rig.fake->complete_all();
}

}  // namespace

TEST_CASE("a failed record in start() leaves the timer closed") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  rig.fake->fail(Op::kRecord);
  CHECK_THROWS_AS(e.start(t, 0), CudaError);
  CHECK_THROWS_AS(e.stop(t, 0), std::invalid_argument);
  e.start(t, 0);
  e.stop(t, 0);
  CHECK(e.pending() == 1);
}

TEST_CASE("a failed record in stop() drops the pair and closes the timer") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  e.start(t, 0);
  rig.fake->fail(Op::kRecord);
  CHECK_THROWS_AS(e.stop(t, 0), CudaError);
  CHECK(e.pending() == 0);
  CHECK(rig.fake->live() == 0);  // the start mark went back
  e.start(t, 0);
  e.stop(t, 0);
  CHECK(e.pending() == 1);
}

TEST_CASE("a failure in harvest() drops that pair only and is reported") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  complete_pairs(rig, t, 3);
  rig.fake->fail(Op::kElapsed);
  CHECK_THROWS_AS(e.harvest(), CudaError);
  CHECK(rig.fake->discarded() == 2);
  CHECK(e.pending() == 2);
  CHECK(e.harvest() == 2);
  CHECK(e.durations(t).size() == 2);
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->bad_frees() == 0);
}

TEST_CASE("a failure in stop()'s head harvest is kept for harvest() to report") {
  Rig rig(/*synchronous=*/false, /*capacity=*/1024);
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  rig.fake->set_complete_on_record(true);
  rig.fake->fail(Op::kElapsed, 2);
  for (std::size_t i = 0; i < straggler::kAutoHarvestPending; ++i) {
    e.start(t, 0);
    e.stop(t, 0);  // the last one's head harvest fails: stop() still succeeds
  }
  CHECK(e.pending() == straggler::kAutoHarvestPending);
  CHECK(rig.fake->discarded() == 0);
  CHECK_THROWS_AS(e.harvest(), CudaError);  // the second failure: reported, head pair dropped
  CHECK(rig.fake->discarded() == 2);
  CHECK(e.harvest() == straggler::kAutoHarvestPending - 1);
  CHECK(rig.fake->live() == 0);
}

TEST_CASE("a failure in flush() keeps the pairs for a later harvest") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  e.start(t, 0);
  e.stop(t, 0);
  rig.fake->fail(Op::kWait);
  CHECK_THROWS_AS(e.flush(), CudaError);
  CHECK(e.pending() == 1);
  rig.fake->complete_all();
  CHECK(e.harvest() == 1);
}

TEST_CASE("a failure to bind the calling thread drops nothing") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  complete_pairs(rig, t, 2);
  rig.fake->fail(Op::kBindThread);
  CHECK_THROWS_AS(e.harvest(), CudaError);
  CHECK(e.pending() == 2);
  CHECK(e.harvest() == 2);
}

TEST_CASE("close() never throws: it logs a harvest failure and frees every mark") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  complete_pairs(rig, t, 1);
  CHECK(e.harvest() == 1);
  complete_pairs(rig, t, 1);
  e.start(t, 0);
  e.stop(t, 0);  // still running
  rig.fake->fail(Op::kElapsed);
  CHECK_NOTHROW(e.close());
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->discarded() == 2);
  CHECK(rig.fake->bad_frees() == 0);
  CHECK(e.durations(t).size() == 1);  // what was stored is kept
}

TEST_CASE("a pair dropped while flush() waits keeps its marks until the wait is over") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  complete_pairs(rig, t, 2);
  int discarded_during_wait = -1;
  bool reported = false;
  rig.fake->set_wait_hook([&] {
    if (discarded_during_wait >= 0) return;
    rig.fake->fail(Op::kElapsed);
    try {
      e.harvest();  // another caller, while flush() waits without the engine's lock
    } catch (const CudaError&) {
      reported = true;
    }
    discarded_during_wait = rig.fake->discarded();
  });
  e.flush();
  CHECK(reported);
  CHECK(discarded_during_wait == 0);  // flush() may still wait on those marks
  CHECK(rig.fake->discarded() == 2);  // destroyed once the wait is over
  CHECK(e.pending() == 0);
  CHECK(e.durations(t).size() == 1);
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->bad_frees() == 0);
}
