// SPDX-License-Identifier: MIT OR GPL-2.0
//
// netreturn's kernel datapath (issue 28): two tc programs on the two ports
// of a Linux bridge. The kernel forwards; these programs only read headers,
// count, report the few segments the window controller must see, and lower
// the advertised window of ACKs. The controllers themselves run in user
// space (crates/gateway/src/kernel/), from the `control` crate, and write
// one `nr_window` per flow into `windows`.
//
// nr_data: on ingress of port A (the data direction, A -> B).
// nr_ack:  on ingress of port B (the ACK direction, B -> A).
//
// What is never touched (SPEC.md section 1 rule 6, as the AF_PACKET path):
// anything but a whole TCP segment over IPv4 with a valid IPv4 header
// checksum; SYNs (their window is unscaled, RFC 7323 section 2.2); RSTs.
// Such frames pass untouched and are counted.

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

// Flags of the TCP header's 13th byte (RFC 9293 section 3.1).
#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

// Indexes into `counters` (kernel/maps.rs `Counter` spells them the same):
// a block of D_COUNT per direction (0: A -> B at nr_data, 1: B -> A at
// nr_ack), then the global ones.
enum {
	D_PACKETS = 0,   // frames
	D_BYTES,         // their bytes
	D_TCP,           // whole TCP segments over IPv4
	D_OTHER,         // well-formed IPv4 that is not TCP
	D_OTHER_BYTES,   // their bytes (SAP-LAW's UDP rate, A -> B)
	D_NOT_IPV4,      // ARP, IPv6, unknown EtherTypes
	D_FRAGMENTS,     // IPv4 fragments
	D_MALFORMED,     // IPv4 / TCP headers that do not hold together
	D_COUNT
};
enum {
	C_ACKS_SEEN = 2 * D_COUNT, // ACKs B -> A of a flow with a window entry
	C_ACKS_REWRITTEN,          // ACKs whose window was lowered
	C_EVENTS,                  // segments reported to user space
	C_EVENTS_LOST,             // reports dropped: the ring was full
	C_COUNT
};

// A flow as its ACKs carry it: the ACK's sender first. Addresses and ports
// in network byte order.
struct nr_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
};

// One flow's window, written by user space (control::KernelWindow).
struct nr_window {
	__u64 num;     // Bytes rule: the window; Fraction rule: numerator
	__u64 den;     // 0: Bytes rule; else the Fraction's denominator
	__u64 floor;   // the smallest window the rule may impose, bytes
	__u64 last_ns; // written here: the flow's last packet, either way
	__u64 bytes;   // written here: bytes A -> B of the flow
	__u8 shift;    // the ACKs' window scale (RFC 7323 section 2.3)
	__u8 rule_on;  // 0: the controller leaves this flow's ACKs alone now
	__u8 steady;   // 1: report only SYN / FIN / RST segments of this flow
	__u8 pad[5];
};

// A segment reported to user space (kernel/event.rs `Event`).
struct nr_event {
	__u64 ts;          // bpf_ktime_get_ns (CLOCK_MONOTONIC)
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u32 seq;
	__u32 ack;
	__u16 window;      // raw field, network byte order
	__u8 flags;
	__u8 dir;          // 0: A -> B, 1: B -> A
	__u32 payload_len;
	__u8 opt_len;      // bytes of TCP options copied (SYNs only)
	__u8 pad[3];
	__u8 opts[40];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); // user space sets the gateway's max_flows
	__type(key, struct nr_key);
	__type(value, struct nr_window);
} windows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); // 52 000 reports: a SYN burst of 0.3 s at 150 000 a second
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, C_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

// Set at load (kernel/bpf.rs): 0 without a controller, which has no flow
// table to feed; the verifier then drops the reporting code.
const volatile __u8 report_segments = 1;

static __always_inline void count(__u32 which, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);
	if (c)
		*c += n; // per-CPU: no other writer
}

// The headers of one frame, as far as they were read.
struct seg {
	__u32 ip_off;
	__u32 tcp_off;
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u32 seq;
	__u32 ack;
	__u16 window; // network byte order
	__u8 flags;
	__u8 doff;    // TCP header length, bytes
	__u32 payload_len;
};

enum kind { K_TCP, K_OTHER, K_NOT_IPV4, K_FRAGMENT, K_MALFORMED };

// The Internet checksum of an IPv4 header holds (RFC 1071): its 16-bit
// one's-complement sum, the checksum field included, is 0xffff.
static __always_inline int ipv4_header_ok(struct __sk_buff *skb, __u32 off, __u32 ihl)
{
	__u16 words[30] = {};
	if (ihl < 20 || ihl > 60 || bpf_skb_load_bytes(skb, off, words, 20) < 0)
		return 0;
	__u32 extra = ihl - 20;
	if (extra > 0 && extra <= 40 && bpf_skb_load_bytes(skb, off + 20, &words[10], extra) < 0)
		return 0;
	__u32 sum = 0;
	for (int i = 0; i < 30; i++) {
		if (i >= ihl / 2)
			break;
		sum += words[i];
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static __always_inline enum kind parse(struct __sk_buff *skb, struct seg *s)
{
	__u16 proto;
	__u32 off = ETH_HLEN;
	if (bpf_skb_load_bytes(skb, 12, &proto, 2) < 0)
		return K_MALFORMED;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		// One VLAN tag in the frame (an accelerated tag is not in the data).
		if (bpf_skb_load_bytes(skb, 16, &proto, 2) < 0)
			return K_MALFORMED;
		off += 4;
	}
	if (proto != bpf_htons(ETH_P_IP))
		return K_NOT_IPV4;
	__u8 ip[20];
	if (bpf_skb_load_bytes(skb, off, ip, 20) < 0)
		return K_MALFORMED;
	__u32 ihl = (ip[0] & 0x0f) * 4;
	__u32 total = ((__u32)ip[2] << 8) | ip[3];
	if ((ip[0] >> 4) != 4 || ihl < 20 || total < ihl || total > skb->len - off)
		return K_MALFORMED;
	// More fragments, or a fragment offset: no whole TCP header to read.
	if ((ip[6] & 0x3f) || ip[7])
		return K_FRAGMENT;
	if (ip[9] != 6)
		return K_OTHER;
	// A corrupted header is never parsed as TCP, so never rewritten: it
	// must reach the receiver still failing its check.
	if (!ipv4_header_ok(skb, off, ihl))
		return K_MALFORMED;
	__u8 tcp[20];
	__u32 tcp_off = off + ihl;
	if (total < ihl + 20 || bpf_skb_load_bytes(skb, tcp_off, tcp, 20) < 0)
		return K_MALFORMED;
	__u32 doff = (tcp[12] >> 4) * 4;
	if (doff < 20 || doff > total - ihl)
		return K_MALFORMED;
	s->ip_off = off;
	s->tcp_off = tcp_off;
	__builtin_memcpy(&s->saddr, &ip[12], 4);
	__builtin_memcpy(&s->daddr, &ip[16], 4);
	__builtin_memcpy(&s->sport, &tcp[0], 2);
	__builtin_memcpy(&s->dport, &tcp[2], 2);
	__builtin_memcpy(&s->seq, &tcp[4], 4);
	__builtin_memcpy(&s->ack, &tcp[8], 4);
	__builtin_memcpy(&s->window, &tcp[14], 2);
	s->flags = tcp[13];
	s->doff = doff;
	s->payload_len = total - ihl - doff;
	return K_TCP;
}

// Hands the segment to user space; counts it lost if the ring is full.
static __always_inline void report(struct __sk_buff *skb, const struct seg *s, __u8 dir, __u64 now)
{
	struct nr_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(C_EVENTS_LOST, 1);
		return;
	}
	e->ts = now;
	e->saddr = s->saddr;
	e->daddr = s->daddr;
	e->sport = s->sport;
	e->dport = s->dport;
	e->seq = s->seq;
	e->ack = s->ack;
	e->window = s->window;
	e->flags = s->flags;
	e->dir = dir;
	e->payload_len = s->payload_len;
	e->opt_len = 0;
	e->pad[0] = e->pad[1] = e->pad[2] = 0;
	__u32 olen = s->doff - 20;
	// Options matter on SYNs only (window scale and MSS, RFC 7323 section
	// 2.2, RFC 9293 section 3.7.1); user space parses them.
	if ((s->flags & TCP_SYN) && olen > 0 && olen <= 40) {
		if (bpf_skb_load_bytes(skb, s->tcp_off + 20, e->opts, olen) == 0)
			e->opt_len = olen;
	}
	bpf_ringbuf_submit(e, 0);
	count(C_EVENTS, 1);
}

static __always_inline int must_report(const struct seg *s, const struct nr_window *w)
{
	if (!report_segments)
		return 0;
	return (s->flags & (TCP_SYN | TCP_FIN | TCP_RST)) || !w || !w->steady;
}

// Counts the frame in direction `dir`; true if it is a TCP segment to
// look at, false if it passes untouched.
static __always_inline int classify(struct __sk_buff *skb, struct seg *s, __u32 dir)
{
	__u32 base = dir * D_COUNT;
	count(base + D_PACKETS, 1);
	count(base + D_BYTES, skb->len);
	switch (parse(skb, s)) {
	case K_TCP:
		count(base + D_TCP, 1);
		return 1;
	case K_OTHER:
		count(base + D_OTHER, 1);
		count(base + D_OTHER_BYTES, skb->len);
		return 0;
	case K_NOT_IPV4:
		count(base + D_NOT_IPV4, 1);
		return 0;
	case K_FRAGMENT:
		count(base + D_FRAGMENTS, 1);
		return 0;
	default:
		count(base + D_MALFORMED, 1);
		return 0;
	}
}

SEC("classifier")
int nr_data(struct __sk_buff *skb)
{
	struct seg s = {};
	if (!classify(skb, &s, 0))
		return TC_ACT_OK;
	__u64 now = bpf_ktime_get_ns();
	// The flow's entry is keyed as its ACKs carry it.
	struct nr_key k = { .saddr = s.daddr, .daddr = s.saddr, .sport = s.dport, .dport = s.sport };
	struct nr_window *w = bpf_map_lookup_elem(&windows, &k);
	if (w) {
		w->last_ns = now;
		__sync_fetch_and_add(&w->bytes, skb->len);
	}
	if (must_report(&s, w))
		report(skb, &s, 0, now);
	return TC_ACT_OK;
}

SEC("classifier")
int nr_ack(struct __sk_buff *skb)
{
	struct seg s = {};
	if (!classify(skb, &s, 1))
		return TC_ACT_OK;
	__u64 now = bpf_ktime_get_ns();
	struct nr_key k = { .saddr = s.saddr, .daddr = s.daddr, .sport = s.sport, .dport = s.dport };
	struct nr_window *w = bpf_map_lookup_elem(&windows, &k);
	if (w)
		w->last_ns = now;
	if (must_report(&s, w))
		report(skb, &s, 1, now);
	if (!w || (s.flags & (TCP_SYN | TCP_RST)) || !(s.flags & TCP_ACK))
		return TC_ACT_OK;
	count(C_ACKS_SEEN, 1);
	if (!w->rule_on)
		return TC_ACT_OK;
	// The rule of SPEC.md section 1, as control::KernelWindow::field:
	// Wr = window << scale (RFC 7323 section 2.3).
	__u32 shift = w->shift & 15;
	__u16 raw = bpf_ntohs(s.window);
	__u64 wr = (__u64)raw << shift;
	__u64 want = w->den ? wr * w->num / w->den : w->num;
	// new = min(Wr, max(rule, floor)) (SPEC.md section 1 rules 1 and 4).
	if (want < w->floor)
		want = w->floor;
	if (want >= wr)
		return TC_ACT_OK;
	// Rounded up to the scale unit, never zero.
	__u64 field = (want + (1ULL << shift) - 1) >> shift;
	if (field < 1)
		field = 1;
	if (field >= raw)
		return TC_ACT_OK;
	__u16 new_be = bpf_htons((__u16)field);
	// RFC 1624 incremental update of the TCP checksum (the window is not in
	// the pseudo-header).
	if (bpf_l4_csum_replace(skb, s.tcp_off + 16, s.window, new_be, sizeof(__u16)) < 0)
		return TC_ACT_OK;
	if (bpf_skb_store_bytes(skb, s.tcp_off + 14, &new_be, sizeof(new_be), 0) < 0)
		return TC_ACT_OK;
	count(C_ACKS_REWRITTEN, 1);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
