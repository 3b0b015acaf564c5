# plugin-stage.sh - stages `make install DESTDIR=...` of the build tree for
# the tests that build plugins out of tree (sourced; sh or bash).
#
# stage_install DIR: installs into DIR (one install at a time across the
# tests that run in parallel: the install relinks plugin modules in the
# build tree), then sets stage_pc (the loams-plugin.pc), stage_host (the
# installed loams-host), stage_plugindir (the staged plugin dir) and points
# pkg-config at the staged tree only (PKG_CONFIG_PATH, _LIBDIR and
# _SYSROOT_DIR, exported).  Returns non-zero with a message on failure.
stage_install() {
  _stage=$1
  if command -v flock >/dev/null; then
    flock "$top_builddir/.stage-install.lock" \
      make -C "$top_builddir" install DESTDIR="$_stage" >"$_stage.install.log" 2>&1
  else
    make -C "$top_builddir" install DESTDIR="$_stage" >"$_stage.install.log" 2>&1
  fi || { cat "$_stage.install.log"; echo "make install DESTDIR=$_stage failed"; return 1; }
  stage_pc=$(find "$_stage" -name loams-plugin.pc -path '*/pkgconfig/*' | head -n 1)
  [ -n "$stage_pc" ] || { echo "loams-plugin.pc was not installed"; return 1; }
  stage_host=$(find "$_stage" -type f -name loams-host -path '*/bin/*' | head -n 1)
  [ -x "$stage_host" ] || { echo "loams-host was not installed"; return 1; }
  PKG_CONFIG_PATH=$(dirname "$stage_pc")
  PKG_CONFIG_LIBDIR=$(dirname "$stage_pc")
  PKG_CONFIG_SYSROOT_DIR="$_stage"
  export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
  # pkgconf puts the sysroot in front of variables, pkg-config does not
  stage_plugindir=$(pkg-config --variable=plugindir loams-plugin)
  case "$stage_plugindir" in
  "$_stage"/*) ;;
  *) stage_plugindir="$_stage$stage_plugindir" ;;
  esac
  [ -f "$stage_plugindir/decoder-json.so" ] ||
    { echo "no decoder-json.so in the staged plugin dir $stage_plugindir"; return 1; }
  return 0
}
