# tests: unit tests (Check), integration tests (real processes), fuzzers,
# benchmarks.  Each area appends its programs here.
