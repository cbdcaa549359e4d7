// Busy time: a scope's sample is the GPU time of its ops, idle gaps and collectives left out;
// segments stored once complete (in any order); per-op timers; nested scopes; other threads'
// ops; failures close the scope anyway. The fake clock stamps each mark when it is recorded.
#include <stdexcept>
#include <thread>
#include <vector>

#include "doctest/doctest.h"
#include "rig.h"

using fake::Op;
using straggler::CudaError;

namespace {

// A busy section timer on `rig`'s engine.
int busy_timer(Rig& rig, const char* name) {
  const int t = rig.engine->timer_id(name);
  rig.engine->set_busy(t, true);
  return t;
}

// One op from `begin_ms` to `end_ms` (fake clock), reported on stream 0.
void op(Rig& rig, double begin_ms, double end_ms, int op_timer = -1) {
  rig.fake->set_now(begin_ms);
  const long long token = rig.engine->op_begin(0);
  rig.fake->set_now(end_ms);
  rig.engine->op_end(token, op_timer, 0);
}

}  // namespace

TEST_CASE("ops on a busy GPU tile the scope, the tail up to stop() included") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  CHECK(e.busy(sec));
  rig.fake->set_now(0.0);
  e.start(sec, 0);  // chain mark at 0, still running
  CHECK(e.open_scopes() == 1);
  op(rig, 1.0, 5.0);  // the GPU is busy: the segment starts at the chain mark (0)
  rig.fake->set_now(7.0);
  e.stop(sec, 0);  // the last tail (5) still runs: 5..7 is busy time too
  CHECK(e.open_scopes() == 0);
  CHECK(e.pending() == 2);
  CHECK(e.durations(sec).empty());
  rig.fake->complete_all();
  CHECK(e.harvest() == 2);
  CHECK(e.durations(sec) == std::vector<double>{7.0});
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->bad_frees() == 0);
}

TEST_CASE("an idle gap before an op is left out (a resume mark starts its segment)") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  rig.fake->set_now(0.0);
  e.start(sec, 0);
  rig.fake->complete_all();  // the GPU caught up and idles
  op(rig, 10.0, 12.0);       // resume mark at 10, tail at 12
  rig.fake->complete_all();
  rig.fake->set_now(20.0);
  e.stop(sec, 0);  // the tail completed: 12..20 was idle, not counted
  CHECK(e.harvest() == 1);
  CHECK(e.durations(sec) == std::vector<double>{2.0});
  CHECK(rig.fake->live() == 0);
}

TEST_CASE("a collective's time is in no segment") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  rig.fake->set_now(0.0);
  e.start(sec, 0);
  op(rig, 0.5, 3.0);  // 0..3
  rig.fake->set_now(8.0);
  e.comm_end(0);       // the collective ran 3..8: the chain restarts at 8
  op(rig, 8.5, 10.0);  // busy: starts at the fresh mark, 8..10
  rig.fake->complete_all();
  e.stop(sec, 0);
  e.flush();
  CHECK(e.durations(sec) == std::vector<double>{5.0});
}

TEST_CASE("a scope without GPU work stores no sample and counts an idle entry") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  e.start(sec, 0);
  rig.fake->complete_all();
  e.stop(sec, 0);
  CHECK(e.durations(sec).empty());
  const auto idle = e.idle_entries();
  REQUIRE(idle.size() == 1);
  CHECK(idle[0].first == "step");
  CHECK(idle[0].second == 1);
  e.reset();
  CHECK(e.idle_entries().empty());
  CHECK(rig.fake->live() == 0);
}

TEST_CASE("each op's segment also goes to its op timer") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  const int mm = e.timer_id("aten.mm");
  rig.fake->set_now(0.0);
  e.start(sec, 0);
  op(rig, 0.0, 2.0, mm);
  op(rig, 2.0, 5.0, mm);
  rig.fake->complete_all();
  e.stop(sec, 0);
  CHECK(e.harvest() == 2);
  CHECK(e.durations(mm) == std::vector<double>{2.0, 3.0});
  CHECK(e.durations(sec) == std::vector<double>{5.0});
}

TEST_CASE("a segment is stored once both of its marks completed, on any stream") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  const int a = e.timer_id("a");
  const int b = e.timer_id("b");
  rig.fake->set_now(0.0);
  const auto chain = rig.fake->next_id();
  e.start(sec, 0);
  op(rig, 0.0, 1.0, a);  // tail: chain + 1
  rig.fake->set_now(1.0);
  const long long token = e.op_begin(0);  // busy: starts at chain + 1
  rig.fake->set_now(4.0);
  const auto tail_b = rig.fake->next_id();
  e.op_end(token, b, 3);  // its tail on another stream
  rig.fake->complete(tail_b);  // b's tail completes first, on its own stream
  rig.fake->complete(chain);
  CHECK(e.harvest() == 0);  // a's tail (chain + 1) still runs, and b starts there
  rig.fake->complete(chain + 1);
  CHECK(e.harvest() == 2);
  CHECK(e.durations(a) == std::vector<double>{1.0});
  CHECK(e.durations(b) == std::vector<double>{3.0});
  rig.fake->complete_all();
  e.stop(sec, 0);
  CHECK(e.durations(sec) == std::vector<double>{4.0});
}

TEST_CASE("a nested scope's sum goes to its parent too") {
  Rig rig;
  auto& e = *rig.engine;
  const int outer = busy_timer(rig, "outer");
  const int inner = busy_timer(rig, "inner");
  rig.fake->set_now(0.0);
  e.start(outer, 0);
  op(rig, 0.0, 1.0);  // outer only
  e.start(inner, 0);
  CHECK(e.open_scopes() == 2);
  op(rig, 1.0, 4.0);  // inner (and so outer)
  rig.fake->complete_all();
  e.stop(inner, 0);
  e.stop(outer, 0);
  e.flush();
  CHECK(e.durations(inner) == std::vector<double>{3.0});
  CHECK(e.durations(outer) == std::vector<double>{4.0});
  CHECK(rig.fake->live() == 0);
}

TEST_CASE("ops outside any scope are not timed; bad tokens are rejected") {
  Rig rig;
  auto& e = *rig.engine;
  CHECK(e.op_begin(0) == -1);
  e.op_end(-1, -1, 0);  // a no-op
  const int sec = busy_timer(rig, "step");
  e.start(sec, 0);
  CHECK_THROWS_WITH_AS(e.op_end(12345, -1, 0), doctest::Contains("`token=12345`"),
                       std::invalid_argument);
  const long long token = e.op_begin(0);
  CHECK_THROWS_WITH_AS(e.op_end(token, 77, 0), doctest::Contains("`timer=77`"),
                       std::invalid_argument);
  e.op_end(token, -1, 0);
  e.stop(sec, 0);
  e.close();
  CHECK(rig.fake->live() == 0);
}

TEST_CASE("an op from a thread without a scope joins the only open chain") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  rig.fake->set_now(0.0);
  e.start(sec, 0);
  std::thread backward([&] { op(rig, 0.0, 6.0); });  // autograd's worker thread
  backward.join();
  rig.fake->complete_all();
  e.stop(sec, 0);
  e.flush();
  CHECK(e.durations(sec) == std::vector<double>{6.0});
}

TEST_CASE("with several threads' scopes open, a third thread's op is not timed") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  e.start(sec, 0);
  std::thread other([&] { e.start(sec, 1); });  // stays open in that (finished) thread
  other.join();
  long long token = 0;
  std::thread third([&] { token = e.op_begin(0); });
  third.join();
  CHECK(token == -1);
  CHECK(e.open_scopes() == 2);
  e.close();
  CHECK(rig.fake->live() == 0);
}

TEST_CASE("a synchronous backend stores busy segments at once") {
  Rig rig(/*synchronous=*/true);
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  rig.fake->set_now(0.0);
  e.start(sec, 0);
  op(rig, 1.0, 3.0);
  e.stop(sec, 0);
  CHECK(e.pending() == 0);
  CHECK(e.durations(sec) == std::vector<double>{2.0});
  CHECK(rig.fake->live() == 0);
}

TEST_CASE("a failure at stop() closes the scope anyway and is reported") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  e.start(sec, 0);
  op(rig, 0.0, 1.0);
  rig.fake->fail(Op::kDone);
  CHECK_THROWS_AS(e.stop(sec, 0), CudaError);
  CHECK(e.open_scopes() == 0);
  rig.fake->complete_all();
  CHECK(e.harvest() == 1);
  CHECK(e.durations(sec) == std::vector<double>{1.0});
  e.start(sec, 0);  // the timer can start again
  e.stop(sec, 0);
  e.close();
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->bad_frees() == 0);
}

TEST_CASE("a failed segment is dropped, the scope finishes without it, the error reported") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  rig.fake->set_now(0.0);
  e.start(sec, 0);
  op(rig, 0.0, 2.0);
  op(rig, 2.0, 3.0);
  rig.fake->complete_all();
  e.stop(sec, 0);
  rig.fake->fail(Op::kElapsed);
  CHECK_THROWS_AS(e.harvest(), CudaError);
  CHECK(e.harvest() == 1);
  CHECK(e.durations(sec) == std::vector<double>{1.0});
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->bad_frees() == 0);
}

TEST_CASE("a failed record in op_begin/op_end leaves the scope consistent") {
  Rig rig;
  auto& e = *rig.engine;
  const int sec = busy_timer(rig, "step");
  e.start(sec, 0);
  rig.fake->complete_all();  // idle: op_begin records a resume mark
  rig.fake->fail(Op::kRecord);
  CHECK_THROWS_AS(e.op_begin(0), CudaError);
  const long long token = e.op_begin(0);
  rig.fake->fail(Op::kRecord);
  CHECK_THROWS_AS(e.op_end(token, -1, 0), CudaError);
  rig.fake->complete_all();
  e.stop(sec, 0);
  CHECK(e.idle_entries().size() == 1);
  e.close();
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->bad_frees() == 0);
}
