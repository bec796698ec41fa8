#!/bin/bash
# Builds leafspine_fct against the ns-3 of PyPI's `ns3` wheel (headers and shared libraries), in the venv that
# ../../../../shared/peers/ns3/build.sh makes (or makes one). Usage: build.sh [OUT_DIR] (default /tmp/ns3ref);
# prints the binary's path.
set -e
H=$(cd "$(dirname "$0")" && pwd); OUT=${1:-/tmp/ns3ref}; mkdir -p "$OUT"
[ -x "$OUT/venv/bin/python" ] || { python3 -m venv "$OUT/venv" && "$OUT/venv/bin/pip" install -q ns3==3.44.post0; }
NS=$("$OUT/venv/bin/python" -c "import os, importlib.util as u; s = u.find_spec('ns3'); print(os.path.dirname(s.origin) if s.origin else list(s.submodule_search_locations)[0])")
LIBS=$(ls "$NS"/lib64/libns3.44-*.so | sed 's#.*/lib\(ns3\.44-[^/]*\)\.so$#-l\1#' | tr '\n' ' ')
[ -x "$OUT/leafspine_fct" ] && [ "$OUT/leafspine_fct" -nt "$H/leafspine_fct.cc" ] || \
  g++ -O2 -std=c++20 -w -I"$NS/include" -o "$OUT/leafspine_fct" "$H/leafspine_fct.cc" -L"$NS/lib64" $LIBS -Wl,-rpath,"$NS/lib64"
echo "$OUT/leafspine_fct"
