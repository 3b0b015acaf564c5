# plugins: one folder per plugin, each with its own fragment.
