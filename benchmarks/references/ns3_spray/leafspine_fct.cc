// A flowsched trace (CSV: id,arrival_s,src,dst,size_bytes, then any columns) through ns-3's TCP on a
// leaf-spine: `tors` ToR switches of `perTor` hosts each, every ToR linked to every one of `spines` spine
// switches. With --spray=1 every node picks among its equal-cost next hops at random for every packet
// (ns-3's Ipv4GlobalRouting::RandomEcmpRouting: packet spraying); with --spray=0 ns-3's global routing
// sends every packet of a pair of hosts over the same spine. --dupThresh sets TcpSocketBase::ReTxThreshold
// (the duplicate ACKs that trigger fast retransmit; a huge value turns it off).
// Output, one line per flow: id,size_bytes,src,dst,arrival_s,connected_s,finish_s,fct_s (with --counters=1 also
// recoveries,timeouts,data_segments: the sender's entries into fast recovery and into loss recovery after an
// RTO, and the data segments it sent, retransmissions included; and a last comment line with the time-averaged
// queue of the ToR ports towards the hosts and the packets dropped at any port)
// (fct_s from the SYN-ACK's arrival at the sender, when data may flow, to the last byte's arrival).
// Written for flowsched's comparison of its packet spraying (issue 20); build with build.sh.
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <fstream>
#include <sstream>
using namespace ns3;

struct Flow {
  uint64_t id, size; uint32_t src, dst; double arrival, connected = -1, finish = -1; uint64_t got = 0;
  uint32_t recoveries = 0, timeouts = 0, segments = 0;
};
static std::vector<Flow> flows;
// Every port's queue disc and device: each host link's host side then ToR side, then each ToR-spine link's
// two sides.
static std::vector<std::pair<Ptr<QueueDisc>, Ptr<NetDevice>>> ports;
static uint32_t hosts = 0;
// --counters=1: the queues of the ToR ports towards the hosts (ports 1, 3, ..., 2 hosts - 1), sampled every 10 us
// from the first arrival until every flow has finished (their time average is printed as a last comment line).
static double queueSum = 0;
static uint64_t queueSamples = 0;
static uint32_t finished = 0;
// packets dropped by the ports' queues (queue discs and devices' queues), by kind of port: the hosts' own,
// the ToRs' towards the hosts, and the ToR-spine links' (both ways)
static uint64_t drops[3] = {0, 0, 0};
static void Dropped(uint32_t kind, Ptr<const QueueDiscItem>) { drops[kind]++; }
static void DeviceDropped(uint32_t kind, Ptr<const Packet>) { drops[kind]++; }
// --dropLog=1: every packet a queue disc drops, on stderr: time, port, kind of port, the queue's packets and bytes,
// RED's reason, the packet's IP ECN field (0 not ECN-capable, 1/2 ECT, 3 CE), TCP flags, payload bytes, sequence
static void DropLogged(uint32_t port, uint32_t kind, Ptr<const QueueDiscItem> item, const char *why) {
  Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
  TcpHeader tcp;
  Ptr<Packet> p = item->GetPacket()->Copy();
  p->RemoveHeader(tcp);
  std::fprintf(stderr, "drop,%.9f,%u,%u,%u,%u,%s,%d,%u,%u,%u\n", Simulator::Now().GetSeconds(), port, kind,
               ports[port].first->GetNPackets(), ports[port].first->GetNBytes(), why, ip ? (int)ip->GetHeader().GetEcn() : -1,
               (unsigned)tcp.GetFlags(), p->GetSize(), tcp.GetSequenceNumber().GetValue());
}
static void SampleQueues() {
  for (uint32_t i = 0; i < hosts; i++) queueSum += ports[2 * i + 1].first->GetNBytes();
  queueSamples++;
  if (finished < flows.size()) Simulator::Schedule(MicroSeconds(10), &SampleQueues);
}

// --traceFlow=ID: that flow's sender's segments, ACKs, windows and states, and its receiver's deliveries, on stderr
static int64_t traced = -1;
static void Received(uint32_t k, Ptr<const Packet> p, const Address &) {
  Flow &f = flows[k];
  if ((int64_t)k == traced) std::fprintf(stderr, "rx,%.9f,%u\n", Simulator::Now().GetSeconds(), p->GetSize());
  f.got += p->GetSize();
  if (f.finish < 0 && f.got >= f.size) { f.finish = Simulator::Now().GetSeconds(); finished++; }
}
// --counters=1: the sender's entries into fast recovery and into loss recovery (an RTO), from its CongState.
static void CongState(uint32_t k, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now) {
  if ((int64_t)k == traced) std::fprintf(stderr, "state,%.9f,%d\n", Simulator::Now().GetSeconds(), (int)now);
  if (now == TcpSocketState::CA_RECOVERY) flows[k].recoveries++;
  if (now == TcpSocketState::CA_LOSS) flows[k].timeouts++;
}
static void Sent(uint32_t k, Ptr<const Packet> p, const TcpHeader &h, Ptr<const TcpSocketBase>) {
  if ((int64_t)k == traced) std::fprintf(stderr, "tx,%.9f,%u,%u,%u\n", Simulator::Now().GetSeconds(), h.GetSequenceNumber().GetValue(), p->GetSize(), (unsigned)h.GetFlags());
  if (p->GetSize() > 0) flows[k].segments++;
}
static void AckIn(uint32_t k, Ptr<const Packet>, const TcpHeader &h, Ptr<const TcpSocketBase>) {
  std::fprintf(stderr, "ack,%.9f,%u,%u\n", Simulator::Now().GetSeconds(), h.GetAckNumber().GetValue(), (unsigned)h.GetFlags());
}
static void Cwnd(uint32_t, uint32_t, uint32_t now) { std::fprintf(stderr, "cwnd,%.9f,%u\n", Simulator::Now().GetSeconds(), now); }
static void Rto(uint32_t, Time, Time now) { std::fprintf(stderr, "rto,%.9f,%.9f\n", Simulator::Now().GetSeconds(), now.GetSeconds()); }
static void Failed(uint32_t k, Ptr<Socket>) { std::cerr << "flow " << flows[k].id << ": connection failed\n"; }

// Connects at the flow's arrival, then keeps the socket's send buffer full until the flow is written.
class BulkWriter : public Application {
 public:
  void Init(uint32_t k, Address peer, uint64_t bytes) { k_ = k; peer_ = peer; left_ = bytes; }
 private:
  void StartApplication() override {
    sock_ = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    sock_->Bind();
    sock_->SetConnectCallback(MakeCallback(&BulkWriter::Up, this), MakeBoundCallback(&Failed, k_));
    sock_->SetSendCallback(MakeCallback(&BulkWriter::Write, this));
    sock_->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongState, k_));
    sock_->TraceConnectWithoutContext("Tx", MakeBoundCallback(&Sent, k_));
    if ((int64_t)k_ == traced) {
      sock_->TraceConnectWithoutContext("Rx", MakeBoundCallback(&AckIn, k_));
      sock_->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&Cwnd, k_));
      sock_->TraceConnectWithoutContext("RTO", MakeBoundCallback(&Rto, k_));
    }
    sock_->Connect(peer_);
  }
  void StopApplication() override {}
  void Up(Ptr<Socket> s) { flows[k_].connected = Simulator::Now().GetSeconds(); Write(s, 0); }
  void Write(Ptr<Socket> s, uint32_t) {
    while (left_ > 0 && s->GetTxAvailable() > 0) {
      uint32_t n = (uint32_t)std::min<uint64_t>({left_, (uint64_t)s->GetTxAvailable(), 65536});
      int w = s->Send(Create<Packet>(n));
      if (w <= 0) return;
      left_ -= w;
    }
  }
  uint32_t k_ = 0; uint64_t left_ = 0; Address peer_; Ptr<Socket> sock_;
};

int main(int argc, char **argv) {
  std::string trace, cc = "ns3::TcpDctcp";
  uint32_t tors = 4, perTor = 8, spines = 2, initCwnd = 10, mss = 1460, bufferBytes = 360000, ecnK = 65;
  uint32_t dupThresh = 3, seed = 1;
  bool spray = true, counters = false, redBytes = false, dropLog = false;
  double hostGbps = 10, coreGbps = 10, delayUs = 0.2, minRtoS = 1e-3, stopS = 100;
  CommandLine cmd;
  cmd.AddValue("trace", "flowsched trace CSV (id,arrival_s,src,dst,size_bytes,...)", trace);
  cmd.AddValue("tors", "ToR switches", tors);
  cmd.AddValue("perTor", "hosts per ToR", perTor);
  cmd.AddValue("spines", "spine switches", spines);
  cmd.AddValue("hostGbps", "host link rate", hostGbps);
  cmd.AddValue("coreGbps", "ToR-spine link rate", coreGbps);
  cmd.AddValue("delayUs", "propagation delay per link, us", delayUs);
  cmd.AddValue("transport", "ns3::TcpDctcp or ns3::TcpNewReno", cc);
  cmd.AddValue("bufferBytes", "queue capacity of every output port, bytes", bufferBytes);
  cmd.AddValue("ecnK", "ECN marking threshold, packets of mss + 40 B (instantaneous queue)", ecnK);
  cmd.AddValue("redBytes", "DCTCP's RED queues count bytes (buffer and threshold, as flowsched's ports), not packets", redBytes);
  cmd.AddValue("initCwnd", "initial window, segments", initCwnd);
  cmd.AddValue("minRtoS", "minimum RTO, s", minRtoS);
  cmd.AddValue("dupThresh", "duplicate ACKs that trigger fast retransmit", dupThresh);
  cmd.AddValue("spray", "per-packet random choice among equal-cost next hops", spray);
  cmd.AddValue("seed", "ns-3's RNG run number (the spraying's draws)", seed);
  cmd.AddValue("counters", "add each flow's fast recoveries, RTOs and data segments, the host ports' mean queue and the drops to the output", counters);
  cmd.AddValue("dropLog", "print every packet a queue disc drops on stderr (drop,time,port,kind,queue packets,queue bytes,reason,ECN,TCP flags,payload,seq)", dropLog);
  cmd.AddValue("traceFlow", "print that flow's (trace row) segments, ACKs, windows, RTOs and deliveries on stderr", traced);
  cmd.AddValue("stopS", "simulated time limit, s", stopS);
  cmd.Parse(argc, argv);
  RngSeedManager::SetRun(seed);

  std::ifstream in(trace);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string c;
    Flow f;
    std::getline(ss, c, ','); f.id = std::stoull(c);
    std::getline(ss, c, ','); f.arrival = std::stod(c);
    std::getline(ss, c, ','); f.src = std::stoul(c);
    std::getline(ss, c, ','); f.dst = std::stoul(c);
    std::getline(ss, c, ','); f.size = (uint64_t)std::stod(c);
    flows.push_back(f);
  }
  hosts = tors * perTor;

  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(cc));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRtoS)));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(dupThresh));
  Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TypeId::LookupByName("ns3::TcpClassicRecovery")));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));
  Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(std::max(minRtoS, 1e-3))));
  if (cc == "ns3::TcpDctcp") Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
  Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(spray));
  uint32_t bufPkts = std::max<uint32_t>(1, bufferBytes / (mss + 40));
  Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(cc == "ns3::TcpDctcp"));
  Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(mss + 40));
  Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1));
  // DCTCP's step: mark every packet above K (ns-3's default, Gentle, marks with probability 1/LInterm at K, rising
  // to 1 at 2K)
  Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
  // RED's thresholds are in the unit of its queue: K packets, or K packets of mss + 40 B in bytes
  double redK = redBytes ? double(ecnK) * (mss + 40) : double(ecnK);
  Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(redK));
  Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(redK));

  NodeContainer h, tor, sp;
  h.Create(hosts); tor.Create(tors); sp.Create(spines);
  InternetStackHelper st;
  st.Install(h); st.Install(tor); st.Install(sp);
  TrafficControlHelper tch;
  QueueSize redSize = redBytes ? QueueSize(QueueSizeUnit::BYTES, bufferBytes) : QueueSize(QueueSizeUnit::PACKETS, bufPkts);
  if (cc == "ns3::TcpDctcp") tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", QueueSizeValue(redSize));
  else tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, bufferBytes)));
  auto link = [&](double gbps) {
    PointToPointHelper p;
    std::ostringstream r; r << gbps << "Gbps";
    p.SetDeviceAttribute("DataRate", StringValue(r.str()));
    p.SetChannelAttribute("Delay", TimeValue(NanoSeconds((int64_t)(delayUs * 1000))));
    p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    return p;
  };
  PointToPointHelper hostLink = link(hostGbps), coreLink = link(coreGbps);
  Ipv4AddressHelper ip;
  std::vector<Ipv4Address> addr(hosts);
  uint32_t net = 0;
  auto subnet = [&]() { std::ostringstream b; b << "10." << (net >> 8) << "." << (net & 255) << ".0"; net++; ip.SetBase(b.str().c_str(), "255.255.255.0"); };
  for (uint32_t i = 0; i < hosts; i++) {
    NetDeviceContainer d = hostLink.Install(h.Get(i), tor.Get(i / perTor));
    QueueDiscContainer qd = tch.Install(d);
    for (uint32_t j = 0; j < 2; j++) ports.push_back({qd.Get(j), d.Get(j)});
    subnet();
    addr[i] = ip.Assign(d).GetAddress(0);
  }
  for (uint32_t t = 0; t < tors; t++)
    for (uint32_t s = 0; s < spines; s++) {
      NetDeviceContainer d = coreLink.Install(tor.Get(t), sp.Get(s));
      QueueDiscContainer qd = tch.Install(d);
      for (uint32_t j = 0; j < 2; j++) ports.push_back({qd.Get(j), d.Get(j)});
      subnet();
      ip.Assign(d);
    }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  std::vector<uint32_t> port(hosts, 1024);
  for (uint32_t k = 0; k < flows.size(); k++) {
    Flow &f = flows[k];
    uint16_t p = port[f.dst]++;
    Ptr<PacketSink> sink = CreateObject<PacketSink>();
    sink->SetAttribute("Protocol", TypeIdValue(TcpSocketFactory::GetTypeId()));
    sink->SetAttribute("Local", AddressValue(InetSocketAddress(Ipv4Address::GetAny(), p)));
    h.Get(f.dst)->AddApplication(sink);
    sink->SetStartTime(Seconds(0));
    sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&Received, k));
    Ptr<BulkWriter> w = CreateObject<BulkWriter>();
    w->Init(k, InetSocketAddress(addr[f.dst], p), f.size);
    h.Get(f.src)->AddApplication(w);
    w->SetStartTime(Seconds(f.arrival));
  }
  if (counters)
    for (uint32_t i = 0; i < ports.size(); i++) {
      uint32_t kind = i >= 2 * hosts ? 2 : i % 2;
      ports[i].first->TraceConnectWithoutContext("Drop", MakeBoundCallback(&Dropped, kind));
      DynamicCast<PointToPointNetDevice>(ports[i].second)->GetQueue()->TraceConnectWithoutContext(
          "Drop", MakeBoundCallback(&DeviceDropped, kind));
    }
  if (dropLog)
    for (uint32_t i = 0; i < ports.size(); i++)
      ports[i].first->TraceConnectWithoutContext("DropBeforeEnqueue", MakeBoundCallback(&DropLogged, i, i >= 2 * hosts ? 2u : i % 2));
  if (counters && !flows.empty()) {
    double first = flows[0].arrival;
    for (auto &f : flows) first = std::min(first, f.arrival);
    Simulator::Schedule(Seconds(first), &SampleQueues);
  }
  Simulator::Stop(Seconds(stopS));
  Simulator::Run();
  std::printf("# ns-3 %s, leaf-spine %u x %u hosts, %u spines, %g/%g Gbps, %g us per link, spray %d, dupThresh %u, buffer %u B, K %u, init cwnd %u, min RTO %g s, seed %u%s\n",
              cc.c_str(), tors, perTor, spines, hostGbps, coreGbps, delayUs, (int)spray, dupThresh, bufferBytes, ecnK, initCwnd, minRtoS, seed,
              cc != "ns3::TcpDctcp" ? "" : redBytes ? ", RED queues in bytes, step marking" : ", RED queues in packets, step marking");
  std::printf("id,size_bytes,src,dst,arrival_s,connected_s,finish_s,fct_s%s\n", counters ? ",recoveries,timeouts,data_segments" : "");
  for (auto &f : flows) {
    std::printf("%llu,%llu,%u,%u,%.9f,%.9f,%.9f,%.9f", (unsigned long long)f.id, (unsigned long long)f.size, f.src, f.dst,
                f.arrival, f.connected, f.finish, f.finish < 0 ? -1.0 : f.finish - f.connected);
    if (counters) std::printf(",%u,%u,%u", f.recoveries, f.timeouts, f.segments);
    std::printf("\n");
  }
  if (counters && queueSamples > 0)
    std::printf("# mean queue of the ToR ports towards the hosts: %.1f B (%llu samples every 10 us); packets dropped: "
                "%llu at the hosts' ports, %llu at the ToRs' towards the hosts, %llu between ToRs and spines\n",
                queueSum / queueSamples / hosts, (unsigned long long)queueSamples, (unsigned long long)drops[0],
                (unsigned long long)drops[1], (unsigned long long)drops[2]);
  Simulator::Destroy();
  return 0;
}
