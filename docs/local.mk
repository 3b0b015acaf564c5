# docs: guides and the man page.
EXTRA_DIST += docs/ARCHITECTURE.md
EXTRA_DIST += docs/LINKS.md
EXTRA_DIST += docs/COLLECTION-SPLIT.md
EXTRA_DIST += docs/GRAPH.md
EXTRA_DIST += docs/TRANSFORM-SQL.md
EXTRA_DIST += docs/TRANSFORM-LUA.md
EXTRA_DIST += docs/PLUGINS.md
dist_man_MANS += docs/loams-host.1
EXTRA_DIST += docs/ICEBERG.md
EXTRA_DIST += docs/OPERATIONS.md
EXTRA_DIST += docs/FORMATS.md
EXTRA_DIST += docs/BENCHMARKS.md
EXTRA_DIST += docs/HTTP.md
EXTRA_DIST += docs/SOURCES.md
EXTRA_DIST += docs/SEARCH.md
EXTRA_DIST += docs/AGGREGATES.md
