// straggler._ops: the per-op observer. An at::RecordFunction callback reports every outermost
// torch op that touches the watched device to the timing engine's busy-time API
// (engine_api.h): op_begin/op_end around compute ops, comm_end after collectives. Built against
// the installed torch (CMakeLists.txt); optional: straggler/timing/capture.py falls back to a
// Python TorchDispatchMode when this module is missing.
//
// Cost per op: the callback (inputs are needed to tell device tensors from CPU ones), one
// cuEventQuery and one cuEventRecord in the engine; with per-op timers also one hash lookup of
// the op's name and input shapes (no string is built once the key was seen). Outside profiled
// sections the callback is disabled (at::disableCallback): ops there pay nothing, not even the
// boxing of their inputs.
//
// Seen through (never the outermost op; the ops they call are considered on their own):
// autograd's per-node records, records that are not operators (no "::" in the name: Dynamo's
// "Torch-Compiled Region", _RecordFunctionFast markers) and the untimed aten ops handed in by
// Python (straggler/timing/untimed_ops.py: views and metadata ops, no kernel; item, a host sync).
//
// Robustness (first H100 run, docs/engine.md "Who reports ops"): the callback is registered once
// with fixed needsInputs and stays registered until remove(); enable/disable re-enable and
// disable it and also flip an atomic, so a thread that still ran it after disable() reports
// nothing. The callbacks never throw: torch logs a full stack trace for every op whose callback
// throws, so any failure is recorded (fail()) and the observer goes quiet. inputs() is never
// trusted to be valid: no inputs means an unknown device, and the op is not reported. Must be
// compiled with NDEBUG like torch (CMakeLists.txt): RecordFunction's layout differs without it.
#include <ATen/record_function.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ops/collectives.h"
#include "timing/engine_api.h"

namespace py = pybind11;

namespace {

class Observer;
std::atomic<Observer*> g_active{nullptr};
std::atomic<std::uint64_t> g_generation{1};  // bumped on enable: stale thread state is ignored
std::atomic<std::uint64_t> g_calls{0};       // start callbacks run, for tests (callback_calls)

enum class Kind : std::uint8_t { kNone, kOp, kComm };

struct ThreadState {
  const at::RecordFunction* outer = nullptr;  // the outermost op in flight on this thread
  std::uint64_t generation = 0;
  Kind kind = Kind::kNone;
  long long token = -1;
  int op_timer = -1;
  std::uintptr_t stream = 0;
  std::vector<std::int64_t> signature;  // reused: the per-op key's parts
};
thread_local ThreadState tls;

class Observer {
 public:
  Observer(std::uintptr_t engine, py::object engine_ref, bool per_op, const std::string& device,
           long long stream, std::vector<std::string> untimed,
           std::vector<std::string> communication)
      : engine_(reinterpret_cast<void*>(engine)),
        engine_ref_(std::move(engine_ref)),
        per_op_(per_op),
        fixed_stream_(stream),
        untimed_names_(std::move(untimed)),
        communication_(std::move(communication)) {
    // Views into untimed_names_, which never changes again: lookups build no string.
    for (const std::string& n : untimed_names_) untimed_.insert(n);
    py::object core = py::module_::import("straggler._core");
    py::object capsule = core.attr("ENGINE_API");
    api_ = static_cast<const StragglerEngineApi*>(
        PyCapsule_GetPointer(capsule.ptr(), STRAGGLER_ENGINE_API_CAPSULE));
    if (api_ == nullptr) throw py::error_already_set();
    if (api_->version != STRAGGLER_ENGINE_API_VERSION) {
      throw std::runtime_error("straggler._core ENGINE_API version " +
                               std::to_string(api_->version) + ", _ops expects " +
                               std::to_string(STRAGGLER_ENGINE_API_VERSION) +
                               ": rebuild the package");
    }
    if (device == "cuda") {
      device_ = c10::DeviceType::CUDA;
    } else if (device == "cpu") {
      device_ = c10::DeviceType::CPU;  // tests: CPU tensors on a simulated stream
    } else {
      throw py::value_error("`device=" + device + "` must be 'cuda' or 'cpu'");
    }
    if (fixed_stream_ < 0 && !c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA)) {
      throw std::runtime_error("this torch has no CUDA: give a fixed `stream`");
    }
  }
  ~Observer() { remove(); }

  void enable() {
    Observer* expected = nullptr;
    if (!g_active.compare_exchange_strong(expected, this) && expected != this) {
      throw std::runtime_error("another straggler op observer is enabled in this process");
    }
    g_generation.fetch_add(1, std::memory_order_acq_rel);
    try {
      if (handle_ == 0) {  // registered once; later enable/disable only switch it
        handle_ = at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end)
                                            .needsInputs(true)
                                            .scopes({at::RecordScope::FUNCTION}));
      } else {
        at::reenableCallback(handle_);
      }
    } catch (...) {
      disable();
      throw;
    }
  }

  void disable() noexcept {
    Observer* self = this;
    if (!g_active.compare_exchange_strong(self, nullptr)) return;
    if (handle_ != 0) {
      try {
        at::disableCallback(handle_);  // ops outside sections skip the callback and its boxing
      } catch (...) {
      }
    }
  }

  void remove() noexcept {
    disable();
    if (handle_ != 0) {
      try {
        at::removeCallback(handle_);
      } catch (...) {
      }
      handle_ = 0;
    }
  }

  void set_paused(bool paused) { paused_.store(paused, std::memory_order_release); }
  [[nodiscard]] std::string error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  [[nodiscard]] bool failed() const { return failed_.load(std::memory_order_acquire); }
  [[nodiscard]] long long ops_timed() const { return ops_.load(std::memory_order_relaxed); }
  py::dict timer_names() const {
    std::lock_guard<std::mutex> lock(mu_);
    py::dict d;
    for (const auto& [name, id] : names_) d[py::str(name)] = id;
    return d;
  }

 private:
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) noexcept {
    try {
      start(fn);
    } catch (const std::exception& e) {
      fail_active(e.what());
    } catch (...) {
      fail_active("unknown exception in the op observer's start callback");
    }
    return nullptr;
  }

  static void on_end(const at::RecordFunction& fn, at::ObserverContext* /*ctx*/) noexcept {
    try {
      end(fn);
    } catch (const std::exception& e) {
      fail_active(e.what());
    } catch (...) {
      fail_active("unknown exception in the op observer's end callback");
    }
  }

  static void fail_active(const char* what) noexcept {
    tls.kind = Kind::kNone;
    Observer* o = g_active.load(std::memory_order_acquire);
    if (o != nullptr) o->fail(what);
  }

  static void start(const at::RecordFunction& fn) {
    g_calls.fetch_add(1, std::memory_order_relaxed);
    ThreadState& t = tls;
    const std::uint64_t gen = g_generation.load(std::memory_order_acquire);
    if (t.outer != nullptr && t.generation == gen) return;  // nested: the parent's
    Observer* o = g_active.load(std::memory_order_acquire);
    if (o == nullptr) return;
    if (o->seen_through(fn.name())) return;
    t.outer = &fn;
    t.generation = gen;
    t.kind = Kind::kNone;
    if (o->failed() || o->paused_.load(std::memory_order_acquire)) return;
    if (o->api_->open_scopes(o->engine_) == 0) return;
    o->begin(fn, t);
  }

  static void end(const at::RecordFunction& fn) {
    ThreadState& t = tls;
    if (t.outer != &fn) return;
    t.outer = nullptr;
    Observer* o = g_active.load(std::memory_order_acquire);
    const Kind kind = t.kind;
    t.kind = Kind::kNone;
    if (o == nullptr || kind == Kind::kNone) return;
    char err[256];
    int rc = 0;
    if (kind == Kind::kOp) {
      rc = o->api_->op_end(o->engine_, t.token, t.op_timer, t.stream, err, sizeof err);
      o->ops_.fetch_add(1, std::memory_order_relaxed);
    } else {
      rc = o->api_->comm_end(o->engine_, t.stream, err, sizeof err);
    }
    if (rc != 0) o->fail(err);
  }

  // Op names whose time is communication (never timed; the busy chain restarts after them):
  // the prefixes of straggler/comm_ops.py's table, handed in by Python.
  [[nodiscard]] bool is_communication(const char* name) const {
    for (const std::string& p : communication_) {
      if (std::strncmp(name, p.data(), p.size()) == 0) return true;
    }
    return false;
  }

  // Whether `name` is never the outermost op (see the file comment). Collectives never are.
  [[nodiscard]] bool seen_through(const char* name) const {
    // The autograd engine wraps each backward node in a record of its own
    // ("autograd::engine::evaluate_function: MmBackward0"): its ops are the node's.
    if (std::strncmp(name, "autograd::", 10) == 0) return true;
    if (std::strncmp(name, "aten::", 6) == 0) {
      return untimed_.count(std::string_view(name + 6)) != 0;
    }
    // Not an operator (a profiler marker around other ops), unless it names a collective.
    return std::strstr(name, "::") == nullptr && !is_communication(name);
  }

  void begin(const at::RecordFunction& fn, ThreadState& t) {
    const char* name = fn.name();
    // Empty when torch kept no inputs for this record: an unknown device, so not reported.
    c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
    c10::DeviceIndex index = -1;
    bool on_device = false;
    for (const c10::IValue& v : inputs) {
      if (v.isTensor()) {
        const at::Tensor& x = v.toTensor();
        if (x.defined() && x.device().type() == device_) {
          on_device = true;
          index = x.device().index();
          break;
        }
      } else if (v.isTensorList()) {
        for (const c10::IValue& e : v.toListRef()) {  // no copy of the list
          if (!e.isTensor()) continue;
          const at::Tensor& x = e.toTensor();
          if (x.defined() && x.device().type() == device_) {
            on_device = true;
            index = x.device().index();
            break;
          }
        }
        if (on_device) break;
      }
    }
    const bool comm = is_communication(name);
    if (!on_device && !comm) return;  // CPU work: nothing on the GPU to time
    try {
      t.stream = stream(index);
      if (comm) {
        t.kind = Kind::kComm;
        return;
      }
      t.op_timer = per_op_ ? op_timer(fn, inputs, t) : -1;
    } catch (const std::exception& e) {
      fail(e.what());
      return;
    }
    char err[256];
    if (api_->op_begin(engine_, t.stream, &t.token, err, sizeof err) != 0) {
      fail(err);
      return;
    }
    if (t.token >= 0) t.kind = Kind::kOp;
  }

  std::uintptr_t stream(c10::DeviceIndex index) const {
    if (fixed_stream_ >= 0) return static_cast<std::uintptr_t>(fixed_stream_);
    const c10::impl::DeviceGuardImplInterface* impl =
        c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
    const c10::Device device =
        index >= 0 ? c10::Device(c10::DeviceType::CUDA, index) : impl->getDevice();
    return reinterpret_cast<std::uintptr_t>(impl->getStream(device).native_handle());
  }

  // The per-op timer of this call: op name, input shapes, first tensor's dtype (as
  // capture.op_key). Looked up by a signature of plain integers; a string only on a miss.
  int op_timer(const at::RecordFunction& fn, c10::ArrayRef<const c10::IValue> inputs,
               ThreadState& t) {
    std::vector<std::int64_t>& sig = t.signature;
    sig.clear();
    const char* name = fn.name();
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the name, then the signature
    for (const char* p = name; *p != '\0'; ++p)
      h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
    sig.push_back(static_cast<std::int64_t>(h));
    std::int64_t dtype = -1;
    auto add = [&](const at::Tensor& x) {
      if (!x.defined()) return;
      if (dtype < 0) dtype = static_cast<std::int64_t>(x.scalar_type());
      sig.push_back(-1 - x.dim());  // separator carrying the rank
      for (std::int64_t d : x.sizes()) sig.push_back(d);
    };
    for (const c10::IValue& v : inputs) {
      if (v.isTensor()) {
        add(v.toTensor());
      } else if (v.isTensorList()) {
        for (const c10::IValue& e : v.toListRef()) {
          if (e.isTensor()) add(e.toTensor());
        }
      }
    }
    sig.push_back(dtype);
    for (std::int64_t x : sig) h = (h ^ static_cast<std::uint64_t>(x)) * 1099511628211ull;
    std::lock_guard<std::mutex> lock(mu_);
    auto range = ids_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second.first == sig) return it->second.second;
    }
    const std::string key = op_key(fn, inputs);
    int id = -1;
    char err[256];
    if (api_->timer_id(engine_, key.data(), key.size(), &id, err, sizeof err) != 0) {
      throw std::runtime_error(err);
    }
    ids_.emplace(h, std::make_pair(sig, id));
    names_.emplace(key, id);
    return id;
  }

  static std::string op_key(const at::RecordFunction& fn, c10::ArrayRef<const c10::IValue> inputs) {
    std::string key;
    const std::optional<c10::OperatorName> op = fn.operator_name();
    if (op) {
      key = op->name;
      const std::size_t colons = key.find("::");
      if (colons != std::string::npos) key.replace(colons, 2, ".");
      key += "." + (op->overload_name.empty() ? std::string("default") : op->overload_name);
    } else {
      key = fn.name();
    }
    key += "(";
    std::string dtype;
    bool first = true;
    auto add = [&](const at::Tensor& x) {
      if (!x.defined()) return;
      if (!first) key += ",";
      first = false;
      if (x.dim() == 0) key += "scalar";
      for (std::int64_t i = 0; i < x.dim(); ++i) {
        if (i) key += "x";
        key += std::to_string(x.size(i));
      }
      if (dtype.empty()) dtype = std::string(c10::getDtypeNames(x.scalar_type()).first);
    };
    for (const c10::IValue& v : inputs) {
      if (v.isTensor()) {
        add(v.toTensor());
      } else if (v.isTensorList()) {
        for (const c10::IValue& e : v.toListRef()) {
          if (e.isTensor()) add(e.toTensor());
        }
      }
    }
    return key + ")" + dtype;
  }

  void fail(const char* what) noexcept {
    try {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.empty()) error_ = what;
    } catch (...) {
    }
    failed_.store(true, std::memory_order_release);
  }

  void* engine_;
  py::object engine_ref_;  // keeps the engine alive while this observer may call it
  const StragglerEngineApi* api_ = nullptr;
  bool per_op_;
  long long fixed_stream_;
  std::vector<std::string> untimed_names_;
  std::unordered_set<std::string_view> untimed_;  // views into untimed_names_
  const std::vector<std::string> communication_;  // RecordFunction name prefixes
  c10::DeviceType device_ = c10::DeviceType::CUDA;
  at::CallbackHandle handle_ = 0;
  std::atomic<bool> paused_{false};
  std::atomic<bool> failed_{false};
  std::atomic<long long> ops_{0};
  mutable std::mutex mu_;  // error_, ids_, names_
  std::string error_;
  std::unordered_multimap<std::uint64_t, std::pair<std::vector<std::int64_t>, int>> ids_;
  std::unordered_map<std::string, int> names_;
};

}  // namespace

// The torch this module was compiled against (torch.__version__): straggler's loader uses it
// only with that torch, and reads the tag from the file without loading it
// (straggler/timing/native_observer.py): a module built for another torch may not even load.
#ifndef STRAGGLER_TORCH_VERSION
#define STRAGGLER_TORCH_VERSION ""
#endif
namespace {
constexpr char kTorchVersionTag[] = "straggler-torch-version:" STRAGGLER_TORCH_VERSION;
}  // namespace

PYBIND11_MODULE(_ops, m) {
  m.doc() =
      "straggler's per-op observer: an at::RecordFunction callback feeding the engine's "
      "busy time (docs/engine.md).";
  m.attr("TORCH_VERSION") = kTorchVersionTag + sizeof("straggler-torch-version:") - 1;
  py::class_<Observer>(m, "Observer",
                       "Reports outermost torch ops on `device` to a TimerEngine while enabled.")
      .def(
          py::init([](py::object engine, bool per_op, const std::string& device, long long stream,
                      std::vector<std::string> untimed, std::vector<std::string> communication) {
            const auto address = engine.attr("_address")().cast<std::uintptr_t>();
            return std::make_unique<Observer>(address, engine, per_op, device, stream,
                                              std::move(untimed), std::move(communication));
          }),
          py::arg("engine"), py::arg("per_op") = false, py::arg("device") = "cuda",
          py::arg("stream") = -1, py::arg("untimed") = std::vector<std::string>{}, py::kw_only(),
          py::arg("communication"),
          "engine: a straggler._core.TimerEngine; per_op: also time each op in a timer keyed "
          "by name and input shapes; device: 'cuda' ('cpu' for tests); stream: -1 for torch's "
          "current CUDA stream, else a fixed raw stream; untimed: aten base names never timed "
          "and seen through (straggler.timing.untimed_ops.UNTIMED_OPS); communication: prefixes of "
          "op names that are communication, never timed (straggler.comm_ops.record_prefixes()).")
      .def("enable", &Observer::enable, "Start observing ops (one observer per process).")
      .def("disable", &Observer::disable, "Stop observing ops (cheap; enable() again later).")
      .def("remove", &Observer::remove, "Unregister the callback for good.")
      .def("set_paused", &Observer::set_paused, py::arg("paused"),
           "While paused, ops are neither timed nor reported.")
      .def_property_readonly("failed", &Observer::failed, "Whether an engine call failed.")
      .def_property_readonly("error", &Observer::error, "The first failure's message, or ''.")
      .def_property_readonly("ops_timed", &Observer::ops_timed, "Ops reported so far.")
      .def("timer_names", &Observer::timer_names, "{per-op timer name: id}.");
  m.def(
      "callback_calls", [] { return g_calls.load(std::memory_order_relaxed); },
      "Start callbacks run so far in this process, by any observer (for tests).");
  straggler_ops::bind_collectives(m);
}
