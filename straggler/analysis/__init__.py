"""Pure arithmetic over reports: statistics, scores, the persistence policy and cause rules.
No process group, no GPU: each function takes numbers and returns numbers or labels."""
