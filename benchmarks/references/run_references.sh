#!/bin/bash
# Runs packet-level references (ns-3's trace_fct, YAPS) on the traces of make_traces.py, one at a time,
# and writes each result in compare_packet.py's format (id,size_bytes,fct_s,finished; xz) into OUT.
#
#   benchmarks/references/run_references.sh OUT JOB...
#     JOB = yaps:<pfabric|dctcp|tcp>:<trace>   e.g. yaps:pfabric:ws_h144_n10000_seed3
#         | ns3:<dctcp|tcp|dctcpsack|tcpsack>:<trace>   e.g. ns3:dctcp:ws_h144_n1500_seed3 (*sack: SACK on)
#
# Environment: PEERS (the peers' folder, default ../shared/peers beside the repository), BUILD (where the
# peers are built: $BUILD/yaps/simulator, $BUILD/ns3ref/trace_fct; default /tmp), PY (python with flowsched),
# NICE (default 10). Each run's raw output, /usr/bin/time -v log and a one-line record (runs.tsv) stay in
# OUT/work/; the record holds the end date, peer, job, wall seconds, user+system CPU seconds, peak RSS (kB),
# the machine and its 1-minute load average when the run started (wall time grows with the load; CPU time less).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); REPO=$(cd "$HERE/../.." && pwd)
PEERS=${PEERS:-$(cd "$REPO/.." && pwd)/shared/peers}; BUILD=${BUILD:-/tmp}; PY=${PY:-python}; NICE=${NICE:-10}
OUT=$1; shift; mkdir -p "$OUT/work"; W=$(cd "$OUT/work" && pwd)
YAPS=$(bash "$PEERS/yaps/build.sh" "$BUILD/yaps" | tail -1)
MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for job in "$@"; do
  IFS=: read -r peer conf trace <<< "$job"
  "$PY" "$HERE/make_traces.py" --out "$W" --only "$trace" --yaps > /dev/null || { echo "trace $trace: checksum mismatch" >&2; exit 1; }
  tag="${peer}_${conf}_${trace}"; load=$(cut -d' ' -f1 /proc/loadavg)
  case $peer in
    yaps)
      d="$W/$tag"; mkdir -p "$d"; cp "$W/$trace.yaps.txt" "$d/"
      n=$(wc -l < "$d/$trace.yaps.txt")
      sed -e "s#^flow_trace: .*#flow_trace: ./$trace.yaps.txt#" -e "s#^num_flow: .*#num_flow: $n#" "$PEERS/yaps/$conf.conf" > "$d/$conf.conf"
      ( cd "$d" && nice -n "$NICE" /usr/bin/time -v "$YAPS" 1 "$conf.conf" > "$W/$tag.out" 2> "$W/$tag.time" ) ;;
    ns3)
      NS3=$(bash "$PEERS/ns3/build.sh" "$BUILD/ns3ref" | tail -1)
      # tcpsack, dctcpsack: SACK on, with ns-3's default recovery (PRR, RFC 6937). dctcp*: RED with MinTh = MaxTh = K
      # and Gentle off, i.e. DCTCP's step marking at K packets (ns-3's default Gentle = true marks with a probability
      # from 2% at K to 1 at 2K instead; the references made before 2026-11-28 evening ran so)
      red="--ns3::RedQueueDisc::Gentle=false"
      case $conf in dctcp) args="--transport=ns3::TcpDctcp --queue=ecn $red";; tcp) args="--transport=ns3::TcpNewReno --queue=droptail";;
                    dctcpsack) args="--transport=ns3::TcpDctcp --queue=ecn --sack=1 $red";;
                    tcpsack) args="--transport=ns3::TcpNewReno --queue=droptail --sack=1";;
                    *) echo "ns3: dctcp, tcp, dctcpsack or tcpsack" >&2; exit 2;; esac
      hosts=$(echo "$trace" | sed -n 's/.*_h\([0-9]*\)_.*/\1/p')
      nice -n "$NICE" /usr/bin/time -v "$NS3" --trace="$W/$trace.csv" --hosts="$hosts" $args > "$W/$tag.out" 2> "$W/$tag.time" ;;
    *) echo "unknown peer $peer" >&2; exit 2;;
  esac
  "$PY" "$REPO/benchmarks/compare_packet.py" convert "$peer" "$W/$tag.out" "$OUT/$tag.csv.xz" --trace "$W/$trace.csv"
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$W/$tag.time" | awk -F: '{s=0; for(i=1;i<=NF;i++) s=s*60+$i; print s}')
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$W/$tag.time")
  cpu=$(sed -n 's/.*\(User\|System\) time (seconds): //p' "$W/$tag.time" | awk '{s+=$1} END {print s}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\tload %s\n' "$(date -u +%FT%TZ)" "$peer" "$conf:$trace" "$wall" "$cpu" "$rss" "$MACHINE" "$load" \
    | tee -a "$W/runs.tsv"
done
