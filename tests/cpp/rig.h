// A TimerEngine on a FakeBackend, the fake still reachable (the engine owns it).
#pragma once

#include <memory>
#include <utility>

#include "fake_backend.h"
#include "timing/timer_engine.h"

struct Rig {
  explicit Rig(bool synchronous = false, long long capacity = 64) {
    auto backend = std::make_unique<fake::FakeBackend>(synchronous);
    fake = backend.get();
    engine = std::make_unique<straggler::TimerEngine>(std::move(backend), capacity);
  }
  fake::FakeBackend* fake;
  std::unique_ptr<straggler::TimerEngine> engine;
};
