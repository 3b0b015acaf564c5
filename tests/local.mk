# tests: unit tests (Check), integration tests (real processes), fuzzers,
# benchmarks.  Each area appends its programs here.

# Unit tests of core modules link the core convenience library.
LOAMS_UNIT_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
LOAMS_UNIT_LDADD = core/libloams-core.la $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_failpoint
tests_unit_test_failpoint_SOURCES = tests/unit/test_failpoint.c
tests_unit_test_failpoint_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_failpoint_LDADD = $(LOAMS_UNIT_LDADD)
TESTS += tests/unit/test_failpoint

# The worker's modules.
check_PROGRAMS += tests/unit/test_scheduler
TESTS += tests/unit/test_scheduler
tests_unit_test_scheduler_SOURCES = tests/unit/test_scheduler.c
tests_unit_test_scheduler_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_scheduler_LDADD = $(LOAMS_UNIT_LDADD)
check_PROGRAMS += tests/unit/test_node_config
TESTS += tests/unit/test_node_config
tests_unit_test_node_config_SOURCES = tests/unit/test_node_config.c
tests_unit_test_node_config_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_node_config_LDADD = $(LOAMS_UNIT_LDADD)
