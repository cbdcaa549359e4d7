// The columns of one NVML sample and how each is read: one table, one row per field
// (nvml_fields.cpp). The sampler thread (nvml_sampler.h) only schedules and buffers the reads.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "driver/nvml.h"

namespace straggler {

// Columns of a sample; the rows of the table in nvml_fields.cpp, whose order is drain()'s and
// straggler/telemetry/nvml.py's RAW_FIELDS. Adding a field: one row there, and this count.
inline constexpr int kNvmlFieldCount = 20;

// One sample's values, in column order. NaN means "absent" (unsupported, or the call failed).
using NvmlRow = std::array<double, kNvmlFieldCount>;

// Why each field is absent for good ("" while it is read).
using NvmlAbsence = std::array<std::string, kNvmlFieldCount>;

// When a field is read: once, when the sampler is made (limits that do not change while the
// board is up: maximum clocks, PCIe link), or in every sample.
enum class Sampling { kStatic, kSampled };

// The column names, in order ("sm_clock_mhz", ...); units are in the names.
const std::vector<std::string>& nvml_field_names();

// What one pass over the table found.
struct NvmlRead {
  std::string failure;     // "" or the first hard NVML failure ("call failed: error")
  bool any_value = false;  // some field of the pass got a value
};

// Reads every field of kind `sampling` that `absent` does not already name into `row` (fields
// that fail stay as they were: NaN in a fresh row). A result meaning "not offered" (see
// nvml_is_unsupported), an entry point the driver lacks, and any failure of a static field
// (read only once) record in `absent` why the field is absent for good; any other result is a
// failure of this pass. Queries shared by several fields are called once per pass.
NvmlRead read_nvml_fields(const Nvml& nvml, nvmlDevice_t device, Sampling sampling, NvmlRow& row,
                          NvmlAbsence& absent);

}  // namespace straggler
