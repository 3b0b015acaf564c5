/*
 * bench_json_entry.c - decoder-json built into a benchmark next to another
 * decoder: the same source, its entry point renamed bench_json_entry so
 * that two plugins link into one program.  Owns nothing.
 */
#include <loams/plugin.h>
#undef LOAMS_PLUGIN_ENTRY
#define LOAMS_PLUGIN_ENTRY bench_json_entry
const loams_plugin_descriptor *bench_json_entry(const loams_host_api *h);
#include "../../plugins/decoder-json/decoder_json.c"
