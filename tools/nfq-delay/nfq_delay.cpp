// nfq_delay.cpp — strait-nfq-delay: the userspace delay stage of the tc/netns launcher.
//
// Where the kernel has no netem (scripts/netns-run, docs/netns.md), each receiving datacenter
// namespace sends packets from the other datacenters to an NFQUEUE in its INPUT chain, and this
// program holds every queued packet for its link's one-way delay before accepting it. The delay
// is keyed by the (source, destination) IPv4 address pair, so each directed link has its own.
// Rates are not our business: htb on the sender's uplink shapes them before packets get here.
//
//   strait-nfq-delay --queue N --delay SRC,DST,MS [--delay ...] [--maxlen PACKETS]
//
// SRC or DST may be "*" (any). Packets that match no rule are accepted at once. The delay is
// constant per pair, so one FIFO per pair keeps each link's packets in order. Prints one "ready"
// line on stdout once the queue is bound (the launcher waits for it), and a summary on exit
// (SIGTERM/SIGINT), after accepting every packet it still holds.
//
// Why INPUT and not OUTPUT: holding locally generated TCP segments on OUTPUT stalls the sender's
// own congestion control (measured: throughput collapses); on INPUT the sender sees a true RTT.
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <string>
#include <vector>

extern "C" {
#include <libnetfilter_queue/libnetfilter_queue.h>
}

namespace {

using Clock = std::chrono::steady_clock;

// One directed link's delay: packets from src to dst (0 = any) wait `delay` each, in order.
struct Rule {
  uint32_t src = 0, dst = 0;  // network byte order; 0 = wildcard
  Clock::duration delay{};
  std::deque<std::pair<Clock::time_point, uint32_t>> held;  // (due, packet id), FIFO
  uint64_t packets = 0, bytes = 0;
};

struct State {
  std::vector<Rule> rules;
  nfq_q_handle* qh = nullptr;
  uint64_t passed = 0;       // packets that matched no rule
  size_t held_now = 0, held_max = 0;
  uint64_t verdict_errors = 0;
};

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "strait-nfq-delay: %s\n", msg.c_str());
  std::exit(1);
}

void usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: strait-nfq-delay --queue N --delay SRC,DST,MS [--delay ...] [--maxlen PACKETS]\n"
               "  holds each IPv4 packet of NFQUEUE N from SRC to DST for MS milliseconds, then\n"
               "  accepts it (SRC/DST may be '*'); unmatched packets are accepted at once.\n");
  std::exit(code);
}

uint32_t parse_addr(const std::string& s, const std::string& arg) {
  if (s == "*") return 0;
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) die("bad IPv4 address '" + s + "' in --delay " + arg);
  return a.s_addr;
}

Rule parse_rule(const std::string& arg) {
  const auto c1 = arg.find(',');
  const auto c2 = c1 == std::string::npos ? c1 : arg.find(',', c1 + 1);
  if (c2 == std::string::npos) die("--delay wants SRC,DST,MS; got '" + arg + "'");
  Rule r;
  r.src = parse_addr(arg.substr(0, c1), arg);
  r.dst = parse_addr(arg.substr(c1 + 1, c2 - c1 - 1), arg);
  char* end = nullptr;
  const std::string ms_text = arg.substr(c2 + 1);
  const double ms = std::strtod(ms_text.c_str(), &end);
  if (ms_text.empty() || *end != '\0' || !(ms >= 0) || ms > 60000)
    die("--delay wants a delay in ms in [0, 60000]; got '" + ms_text + "'");
  r.delay = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms));
  return r;
}

void accept(State& st, uint32_t id) {
  if (nfq_set_verdict(st.qh, id, NF_ACCEPT, 0, nullptr) < 0) ++st.verdict_errors;
}

// Called by nfq_handle_packet for every queued packet: accept now or hold it.
int on_packet(nfq_q_handle*, nfgenmsg*, nfq_data* nfa, void* data) {
  auto& st = *static_cast<State*>(data);
  const nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa);
  if (!ph) return 0;
  const uint32_t id = ntohl(ph->packet_id);
  unsigned char* payload = nullptr;
  const int len = nfq_get_payload(nfa, &payload);  // only the copied IP header (see copy range)
  Rule* rule = nullptr;
  if (len >= 20 && (payload[0] >> 4) == 4) {
    uint32_t src, dst;
    std::memcpy(&src, payload + 12, 4);
    std::memcpy(&dst, payload + 16, 4);
    for (auto& r : st.rules)
      if ((r.src == 0 || r.src == src) && (r.dst == 0 || r.dst == dst)) { rule = &r; break; }
  }
  if (!rule || rule->delay == Clock::duration::zero()) {
    ++st.passed;
    accept(st, id);
    return 0;
  }
  uint16_t total = 0;  // IPv4 total length (GSO packets may say 0; count the header then)
  std::memcpy(&total, payload + 2, 2);
  rule->packets++;
  rule->bytes += ntohs(total);
  rule->held.emplace_back(Clock::now() + rule->delay, id);
  if (++st.held_now > st.held_max) st.held_max = st.held_now;
  return 0;
}

// Accepts every held packet due by `now` (all of them when `all`); returns the next due time.
Clock::time_point release(State& st, Clock::time_point now, bool all) {
  Clock::time_point next = Clock::time_point::max();
  for (auto& r : st.rules) {
    while (!r.held.empty() && (all || r.held.front().first <= now)) {
      accept(st, r.held.front().second);
      r.held.pop_front();
      --st.held_now;
    }
    if (!r.held.empty() && r.held.front().first < next) next = r.held.front().first;
  }
  return next;
}

}  // namespace

int main(int argc, char** argv) {
  int queue = -1;
  uint32_t maxlen = 65536;
  State st;
  std::vector<std::string> rule_text;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") usage(0);
    else if (a == "--queue") queue = std::atoi(value().c_str());
    else if (a == "--maxlen") maxlen = static_cast<uint32_t>(std::strtoul(value().c_str(), nullptr, 10));
    else if (a == "--delay") { rule_text.push_back(value()); st.rules.push_back(parse_rule(rule_text.back())); }
    else { std::fprintf(stderr, "strait-nfq-delay: unknown argument '%s'\n", a.c_str()); usage(2); }
  }
  if (queue < 0 || queue > 65535) die("--queue N (0..65535) is required");
  if (st.rules.empty()) die("at least one --delay SRC,DST,MS is required");
  if (maxlen < 16) die("--maxlen must be >= 16");

  nfq_handle* h = nfq_open();
  if (!h) die(std::string("nfq_open failed (needs root / CAP_NET_ADMIN and nfnetlink_queue): ") + std::strerror(errno));
  nfq_bind_pf(h, AF_INET);  // a no-op on kernels >= 3.8, needed before
  st.qh = nfq_create_queue(h, static_cast<uint16_t>(queue), &on_packet, &st);
  if (!st.qh) die("cannot bind NFQUEUE " + std::to_string(queue) + " (already bound by another process?): " + std::strerror(errno));
  // Only the IPv4 header is needed to find the rule: copy 40 bytes, not the payload.
  if (nfq_set_mode(st.qh, NFQNL_COPY_PACKET, 40) < 0) die("nfq_set_mode failed");
  // A whole bandwidth-delay product sits here (1 Gbit/s x 50 ms = 6 MB, thousands of packets).
  if (nfq_set_queue_maxlen(st.qh, maxlen) < 0) die("nfq_set_queue_maxlen failed");
  // Take GSO super-packets whole instead of making the kernel segment them (we never edit data).
  nfq_set_queue_flags(st.qh, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO);

  const int fd = nfq_fd(h);
  nfnl_rcvbufsiz(nfq_nfnlh(h), 16u << 20);
  const int rcv = 16 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv);  // root: beyond rmem_max
  const int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);

  std::printf("strait-nfq-delay: queue %d ready, %zu rule(s):", queue, st.rules.size());
  for (const auto& t : rule_text) std::printf(" %s", t.c_str());
  std::printf("\n");
  std::fflush(stdout);

  std::vector<char> buf(1 << 18);
  Clock::time_point next = Clock::time_point::max();
  uint64_t recv_errors = 0;
  while (!g_stop) {
    pollfd p{fd, POLLIN, 0};
    timespec ts{}, *tsp = nullptr;
    if (next != Clock::time_point::max()) {
      const auto wait = std::max(Clock::duration::zero(), next - Clock::now());
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
      ts.tv_sec = ns / 1000000000;
      ts.tv_nsec = ns % 1000000000;
      tsp = &ts;
    }
    const int n = ppoll(&p, 1, tsp, nullptr);
    if (n < 0 && errno != EINTR) die(std::string("ppoll: ") + std::strerror(errno));
    if (n > 0) {
      for (int k = 0; k < 256; ++k) {  // drain what is there, but keep releasing on time
        const ssize_t got = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
        if (got < 0) {
          if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ++recv_errors;
          break;
        }
        nfq_handle_packet(h, buf.data(), static_cast<int>(got));
      }
    }
    next = release(st, Clock::now(), false);
  }
  release(st, Clock::now(), true);

  std::printf("strait-nfq-delay: queue %d done: %llu unmatched packet(s) passed, at most %zu held at once,"
              " %llu verdict error(s), %llu receive error(s)\n",
              queue, static_cast<unsigned long long>(st.passed), st.held_max,
              static_cast<unsigned long long>(st.verdict_errors), static_cast<unsigned long long>(recv_errors));
  for (size_t i = 0; i < st.rules.size(); ++i)
    std::printf("  %s: %llu packet(s), %llu byte(s) delayed\n", rule_text[i].c_str(),
                static_cast<unsigned long long>(st.rules[i].packets),
                static_cast<unsigned long long>(st.rules[i].bytes));
  nfq_destroy_queue(st.qh);
  nfq_close(h);
  return 0;
}
