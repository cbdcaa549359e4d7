// summarize(): one row of statistics, computed as numpy computes them.
#include "timing/summary.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace straggler {

void summarize(std::vector<double>& samples, double* row) {
  const std::size_t n = samples.size();
  if (n == 0) {
    std::fill(row, row + kNumColumns, std::numeric_limits<double>::quiet_NaN());
    row[kNum] = 0.0;
    row[kTotal] = 0.0;
    return;
  }
  double lo = samples[0], hi = samples[0], sum = 0.0;
  for (double x : samples) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  const double mean = sum / static_cast<double>(n);
  double ss = 0.0;  // two passes, as numpy.std does
  for (double x : samples) ss += (x - mean) * (x - mean);
  // Median as numpy.median: the mean of the two middle values when n is even.
  const std::size_t mid = n / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid),
                   samples.end());
  double median = samples[mid];
  if (n % 2 == 0) {
    const double lower =
        *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid));
    median = 0.5 * (lower + median);
  }
  row[kMin] = lo;
  row[kMax] = hi;
  row[kMed] = median;
  row[kAvg] = mean;
  // Sample standard deviation (ddof=1), as NVRx (torch.std) and the sections' statistics.
  row[kStd] =
      n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : std::numeric_limits<double>::quiet_NaN();
  row[kNum] = static_cast<double>(n);
  row[kTotal] = sum;
}

}  // namespace straggler
