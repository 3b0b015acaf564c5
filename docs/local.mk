# docs: guides and the man page.
EXTRA_DIST += docs/ARCHITECTURE.md
EXTRA_DIST += docs/LINKS.md
EXTRA_DIST += docs/COLLECTION-SPLIT.md
EXTRA_DIST += docs/TRANSFORM-SQL.md
