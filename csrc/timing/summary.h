// The statistics of a timer's samples: the columns, one table per report, and how a row is made.
#pragma once

#include <string>
#include <vector>

namespace straggler {

// Statistics columns, in this order, durations in milliseconds.
enum SummaryColumn : int { kMin = 0, kMax, kMed, kAvg, kStd, kNum, kTotal, kNumColumns };
inline constexpr const char* kSummaryColumns[kNumColumns] = {"MIN", "MAX", "MED",  "AVG",
                                                             "STD", "NUM", "TOTAL"};

// One row per timer with at least one sample: values is rows x kNumColumns, row-major.
struct Summaries {
  std::vector<std::string> names;
  std::vector<double> values;
};

// Statistics of `samples` (reordered in place), written to row[0..kNumColumns): MED as
// numpy.median, STD the sample standard deviation (ddof=1, NaN for one sample), NUM the count,
// TOTAL the sum. No samples: NaN statistics, NUM and TOTAL 0.
void summarize(std::vector<double>& samples, double* row);

}  // namespace straggler
