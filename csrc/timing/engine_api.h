// The timing engine's busy-time API as a plain C function table, for the optional op observer
// (straggler._ops). _core exports one table as the PyCapsule `straggler._core.ENGINE_API`, so
// _ops calls the engine without linking _core (two extension modules, one engine).
#pragma once

#include <stddef.h>
#include <stdint.h>

#define STRAGGLER_ENGINE_API_CAPSULE "straggler._core.ENGINE_API"
#define STRAGGLER_ENGINE_API_VERSION 1

extern "C" {

// `engine` is a straggler::TimerEngine* (TimerEngine._address()). Every function returns 0 on
// success, or -1 with a NUL-terminated message in err[0..errlen). None throws or blocks.
struct StragglerEngineApi {
  int version;  // STRAGGLER_ENGINE_API_VERSION
  // A compute op starts on `stream`: *token is its token, or -1 when it is not timed.
  int (*op_begin)(void* engine, uintptr_t stream, long long* token, char* err, size_t errlen);
  // The op of `token` ended on `stream`; op_timer >= 0 also gets the op's GPU time.
  int (*op_end)(void* engine, long long token, int op_timer, uintptr_t stream, char* err,
                size_t errlen);
  // A collective ended on `stream`: its time is excluded from every segment.
  int (*comm_end)(void* engine, uintptr_t stream, char* err, size_t errlen);
  // The id of timer `name` (created on first use).
  int (*timer_id)(void* engine, const char* name, size_t len, int* id, char* err, size_t errlen);
  // Busy scopes open in the engine (0: no section is being timed, ops need not be reported).
  int (*open_scopes)(void* engine);
};

}  // extern "C"
