#!/bin/bash
# Builds the aSCC authors' ns-2 (github.com/pschuprikov/ascc: their modified ns-2.35 and run scripts, the code
# behind the paper's Figs. 4-5) on Debian 12 with clang, and a venv with what their runner imports (click, toml).
# Usage: build.sh SRC [OUT_DIR]   SRC: a checkout of that repository (or a git directory of it: its HEAD is
# exported, skipping files the mirror lacks); OUT_DIR default /tmp/ascc_ns2. Prints the ns binary's path. Adds the
# scales ref3k and ref20k (the paper's fabric, 3,000 and 20,000 flows) to OUT_DIR/scripts/config.toml.
# Needs (apt): clang cmake tcl-dev tk-dev libotcl1-dev libtclcl1-dev tclcl libspdlog-dev libfmt-dev
# nlohmann-json3-dev. Changes to the build only, none to their code: their -Werror dropped; C++17 and the standard
# headers their sources use without including them (newer libstdc++ no longer brings them in); Debian's tclcl.h
# with spaces in one macro's string pasting (C++11 needs them); and, because Debian builds libtclcl without
# 64-bit variable binding, a TclObject::bind(const char*, int64_t*) that aborts with a message (only ns-2's queue
# monitors bind such variables, and the aSCC scripts make none).
set -e
SRC=${1:?usage: build.sh SRC [OUT_DIR]}; OUT=${2:-/tmp/ascc_ns2}; H=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
if [ ! -d "$OUT/ns2" ]; then
  if [ -d "$SRC/ns2" ]; then cp -r "$SRC/ns2" "$SRC/scripts" "$OUT/"
  else  # a bare git directory: export HEAD's blobs one by one (a partial mirror may lack a few test data files)
    git -C "$SRC" ls-tree -r HEAD --format='%(objectmode) %(objectname) %(path)' | while read -r mode obj path; do
      if [ "$mode" = 160000 ]; then continue; fi
      mkdir -p "$OUT/$(dirname "$path")"
      if [ "$mode" = 120000 ]; then ln -sf "$(git -C "$SRC" cat-file blob "$obj")" "$OUT/$path"
      else git -C "$SRC" cat-file blob "$obj" > "$OUT/$path" 2>/dev/null || rm -f "$OUT/$path"; fi
      if [ "$mode" = 100755 ] && [ -f "$OUT/$path" ]; then chmod +x "$OUT/$path"; fi
    done
  fi
fi
# the runs' scales: the paper's 144-host fabric ([scale.final]) with 3,000 and 20,000 flows instead of 100,000
for n in 3000 20000; do
  k=ref$((n / 1000))k
  grep -q "^ *\[scale\.$k\]" "$OUT/scripts/config.toml" || python3 - "$OUT/scripts/config.toml" "$k" "$n" <<'PY'
import sys
p, k, n = sys.argv[1:]
s = open(p).read()
block = f"    [scale.{k}]\n    sim_end = {n}\n    topology_spt = 16\n    topology_tors = 9\n    topology_spines = 4\n    topology_x = 1\n\n"
open(p, "w").write(s.replace("    [scale.tiny]", block + "    [scale.tiny]", 1))
PY
done
mkdir -p "$OUT/tclcl_inc" && cp /usr/include/tclcl/*.h "$OUT/tclcl_inc/"
sed -i 's/"variable "oldname" is renamed to "newname)/"variable " oldname " is renamed to " newname)/' "$OUT/tclcl_inc/tclcl.h"
sed -i 's/add_compile_options(-Wall -Werror)/add_compile_options(-Wall)/' "$OUT/ns2/CMakeLists.txt"
clang++ -std=c++17 -w -O2 -c "$H/int64_bind_shim.cc" -I"$OUT/tclcl_inc" -I/usr/include/tcl -DHAVE_INT64 \
  -DUSE_INTERP_RESULT -DUSE_INTERP_ERRORLINE -o "$OUT/int64_bind_shim.o"
mkdir -p "$OUT/ns2/build" && cd "$OUT/ns2/build"
CC=clang CXX=clang++ cmake .. -DCMAKE_BUILD_TYPE=Release -DTCLCL_INCLUDE_DIR="$OUT/tclcl_inc" \
  -DCMAKE_CXX_FLAGS="-std=c++17 -w -include array -include stdexcept -include string_view -include optional" \
  -DCMAKE_C_FLAGS="-w" -DCMAKE_EXE_LINKER_FLAGS="$OUT/int64_bind_shim.o" > "$OUT/cmake.log"
make -j"$(nproc)" ns > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
[ -x "$OUT/venv/bin/python" ] || { python3 -m venv "$OUT/venv" && "$OUT/venv/bin/pip" install -q click toml; }
echo "$OUT/ns2/build/ns"
