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
// NGWA (seed 001 section 4; SPEC.md 2.6), when user space turns it on at
// load: a router clamps the MSS of SYNs and writes its direction's W_node
// (user space computes it every tick from the queue, `ngwa_node`) into an
// IPv4 option of every TCP segment, inserted with bpf_skb_adjust_room, or
// lowers the value a segment already carries; an edge reads the value data
// A -> B arrives with into the flow's `seen` entry, strips the option, and
// keeps the right edge of the flow's ACKs from moving left.
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
	C_NGWA,                    // NGWA's block per direction (N_*), then
	C_COUNT = C_NGWA + 2 * 10
};
// An index into a 64-byte stack buffer, masked in an instruction of its own:
// clang drops a plain `& 63` it can prove redundant, and the verifier,
// which cannot follow the loop's bounds, then refuses the read.
#define AT(i) ({ __u32 _v = (i); asm volatile("%0 &= 63" : "+r"(_v)); _v; })

// NGWA's counters, a block per direction at C_NGWA + dir * N_COUNT, as the
// packet datapath's NgwaWireStats (crates/gateway/src/ngwa.rs) names them.
enum {
	N_MSS_CLAMPED = 0, // SYNs whose MSS option was lowered
	N_INSERTED,        // router: segments given the option
	N_LOWERED,         // router: segments whose value was lowered
	N_KEPT,            // router: segments whose value was already at most ours
	N_TOO_BIG,         // router: the option would pass the MTU
	N_OPTIONS_FULL,    // router: the header has no room for 8 more bytes
	N_BAD_OPTIONS,     // the option list does not parse
	N_VALUES_READ,     // edge: segments that arrived carrying a value
	N_STRIPPED,        // edge: options removed
	N_UNSUPPORTED,     // the kernel refused to make room (a VLAN tag)
	N_COUNT
};

// A flow as its ACKs carry it: the ACK's sender first. Addresses and ports
// in network byte order.
struct nr_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
};

// One flow's window, written by user space only (control::KernelWindow).
struct nr_window {
	__u64 num;       // Bytes rule: the window; Fraction rule: numerator
	__u64 den;       // 0: Bytes rule; else the Fraction's denominator
	__u64 floor;     // the smallest window the rule may impose, bytes
	__u8 shift;      // the ACKs' window scale (RFC 7323 section 2.3)
	__u8 rule_on;    // 0: the controller leaves this flow's ACKs alone now
	__u8 steady;     // 1: report only SYN / FIN / RST segments of this flow
	__u8 keep_edge;  // 1: never move the right edge offered to the left
	__u8 pad[4];
};

// What the programs learn of a flow with a `windows` entry, written here
// only (user space reads it, and deletes it with the flow): apart from
// `windows`, so a rule written by user space never loses an update.
struct nr_seen {
	__u64 last_ns;   // the flow's last packet, either way
	__u64 bytes;     // bytes A -> B
	__u64 ngwa_sum;  // NGWA edge: the values data A -> B arrived with, summed
	__u64 ngwa_n;    // and counted (both only grow)
	__u32 ngwa_last; // the last of them
	__u32 edge;      // keep_edge: ACK + window of the last ACK let through
	__u8 edge_set;   // `edge` holds a value
	__u8 pad[7];
};

// A router's W_node in one direction (seed 001 eq. 3), written by user
// space every tick; `valid` 0 until the first tick.
struct nr_node {
	__u32 w;
	__u32 valid;
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
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); // as `windows`
	__type(key, struct nr_key);
	__type(value, struct nr_seen);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2); // 0: A -> B, 1: B -> A
	__type(key, __u32);
	__type(value, struct nr_node);
} ngwa_node SEC(".maps");

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

// Set at load (kernel/bpf.rs). What is reported to user space: 0 nothing
// (no controller, no NGWA router: the verifier drops the reporting code);
// 1 what the flow table needs; 2 SYN / FIN / RST only (an NGWA router that
// divides by flows and has no flow table).
const volatile __u8 report_segments = 1;
// NGWA's roles, and the largest IPv4 packet the egress carries.
const volatile __u8 ngwa_router = 0;
const volatile __u8 ngwa_edge = 0;
const volatile __u32 ngwa_mtu = 1500;

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
	__u8 ihl;     // IPv4 header length, bytes
	__u16 total;  // IPv4 total length
	__u32 payload_len;
};

enum kind { K_TCP, K_OTHER, K_NOT_IPV4, K_FRAGMENT, K_MALFORMED };

// The 16-bit one's-complement sum of an IPv4 header (RFC 1071), folded;
// with `zero_check` the checksum field counts as 0. -1 if unreadable.
// `head`: the header's first 20 bytes if the caller has read them already
// (NULL: read here).
static __always_inline __s64 ipv4_sum(struct __sk_buff *skb, __u32 off, __u32 ihl, int zero_check,
				      const __u8 *head)
{
	__u16 words[42] = {};
	if (ihl < 20 || ihl > 60)
		return -1;
	if (head)
		__builtin_memcpy(words, head, 20);
	else if (bpf_skb_load_bytes(skb, off, words, 20) < 0)
		return -1;
	__u32 extra = ihl - 20;
	// 4..40 bytes of options; 1..64 as the verifier sees the length (AT),
	// which `words` has room for.
	if (extra && bpf_skb_load_bytes(skb, off + 20, &words[10], AT(extra - 1) + 1) < 0)
		return -1;
	if (zero_check)
		words[5] = 0;
	__u32 sum = 0;
	for (int i = 0; i < 30; i++) {
		if (i >= ihl / 2)
			break;
		sum += words[i];
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

// The Internet checksum of an IPv4 header holds: its sum, the checksum
// field included, is 0xffff.
static __always_inline int ipv4_header_ok(struct __sk_buff *skb, __u32 off, __u32 ihl, const __u8 *head)
{
	return ipv4_sum(skb, off, ihl, 0, head) == 0xffff;
}

// Writes the header checksum of the (rewritten) IPv4 header at `off`.
static __always_inline void ipv4_fill_checksum(struct __sk_buff *skb, __u32 off, __u32 ihl)
{
	__s64 sum = ipv4_sum(skb, off, ihl, 1, NULL);
	if (sum < 0)
		return;
	__u16 check = ~(__u16)sum;
	bpf_skb_store_bytes(skb, off + 10, &check, 2, 0);
}

// Reads `len` (a constant) bytes at `off` straight from the packet when
// they lie in its linear part (the usual case for headers: no helper call),
// else through bpf_skb_load_bytes. 0, or < 0 if the packet is shorter.
static __always_inline long load(struct __sk_buff *skb, __u32 off, void *dst, __u32 len)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	__u32 at = off;
	// 0..127 as the verifier sees it: the headers' offsets are below 80.
	asm volatile("%0 &= 127" : "+r"(at));
	if (at == off) {
		__u8 *p = (__u8 *)data + at;
		if ((void *)(p + len) <= end) {
			__builtin_memcpy(dst, p, len);
			return 0;
		}
	}
	return bpf_skb_load_bytes(skb, off, dst, len);
}

static __always_inline enum kind parse(struct __sk_buff *skb, struct seg *s)
{
	__u16 proto;
	__u32 off = ETH_HLEN;
	if (load(skb, 12, &proto, 2) < 0)
		return K_MALFORMED;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		// One VLAN tag in the frame (an accelerated tag is not in the data).
		if (load(skb, 16, &proto, 2) < 0)
			return K_MALFORMED;
		off += 4;
	}
	if (proto != bpf_htons(ETH_P_IP))
		return K_NOT_IPV4;
	__u8 ip[20];
	if (load(skb, off, ip, 20) < 0)
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
	if (!ipv4_header_ok(skb, off, ihl, ip))
		return K_MALFORMED;
	__u8 tcp[20];
	__u32 tcp_off = off + ihl;
	if (total < ihl + 20 || load(skb, tcp_off, tcp, 20) < 0)
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
	s->ihl = ihl;
	s->total = total;
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
	if (s->flags & (TCP_SYN | TCP_FIN | TCP_RST))
		return 1;
	return report_segments == 1 && (!w || !w->steady);
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

// The flow's key as its ACKs carry it: the reverse of a data segment's.
static __always_inline struct nr_key ack_key(const struct seg *s, __u8 dir)
{
	if (dir == 0)
		return (struct nr_key){ .saddr = s->daddr, .daddr = s->saddr, .sport = s->dport, .dport = s->sport };
	return (struct nr_key){ .saddr = s->saddr, .daddr = s->daddr, .sport = s->sport, .dport = s->dport };
}

// The flow's `seen` entry, made on its first packet once it has a
// `windows` entry; NULL for a flow without one.
static __always_inline struct nr_seen *seen_of(const struct nr_key *k)
{
	struct nr_seen *e = bpf_map_lookup_elem(&seen, k);
	if (e)
		return e;
	struct nr_seen zero = {};
	bpf_map_update_elem(&seen, k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&seen, k);
}

// The flow's entry in `windows`, with its last packet time (and, A -> B,
// its bytes) updated in `seen`; the segment reported if user space needs
// it. `*out` is the flow's `seen` entry (NULL without a `windows` entry).
static __always_inline struct nr_window *see(struct __sk_buff *skb, const struct seg *s, __u8 dir,
					     struct nr_seen **out)
{
	struct nr_key k = ack_key(s, dir);
	struct nr_window *w = bpf_map_lookup_elem(&windows, &k);
	struct nr_seen *e = w ? seen_of(&k) : NULL;
	int rep = must_report(s, w);
	// The clock is read only when something keeps the time: the exact
	// clock for a reported segment (user space times the handshake with
	// it), the coarse one (CLOCK_MONOTONIC at a jiffy's resolution, a
	// load rather than a clock read) for the flow's last activity, which
	// only its idle timeout (seconds to minutes) reads.
	__u64 now = rep ? bpf_ktime_get_ns() : 0;
	if (e) {
		e->last_ns = rep ? now : bpf_ktime_get_coarse_ns();
		if (dir == 0)
			__sync_fetch_and_add(&e->bytes, skb->len);
	}
	*out = e;
	if (rep)
		report(skb, s, dir, now);
	return w;
}

static __always_inline void ngwa_count(__u8 dir, __u32 which)
{
	count(C_NGWA + dir * N_COUNT + which, 1);
}

// A walk over an option list (RFC 791 section 3.1, RFC 9293 section 3.2:
// the same kinds 0 and 1, then kind, length, data) for one option kind,
// run by bpf_loop so that the verifier checks one step, not every path
// through 40 bytes.
#define N_NONE -2
#define N_BAD -1
struct opt_walk {
	__u8 opts[64]; // the option area (at most 40 bytes); indexes masked
	__u32 olen;
	__u32 i;
	__u32 kind;    // the option sought, and its only valid length
	__u32 len;
	__s32 found;   // its offset, N_NONE, or N_BAD (the list does not parse,
		       // or the option has another length)
};

static long opt_step(__u64 n, void *ctx)
{
	struct opt_walk *w = ctx;
	__u32 i = w->i;
	if (i >= w->olen || i >= 40)
		return 1;
	__u8 kind = w->opts[AT(i)];
	if (kind == 0) // End of Option List
		return 1;
	if (kind == 1) { // No Operation
		w->i = i + 1;
		return 0;
	}
	__u8 len = i + 1 < w->olen ? w->opts[AT(i + 1)] : 0;
	if (len < 2 || i + len > w->olen) {
		w->found = N_BAD;
		return 1;
	}
	if (kind == w->kind) {
		w->found = len == w->len ? (__s32)i : N_BAD;
		return 1;
	}
	w->i = i + len;
	return 0;
}

// Loads the `olen` option bytes at `off` into `w` and finds option `kind`
// of length `len` among them (`w->found`).
static __always_inline void opt_find(struct __sk_buff *skb, __u32 off, __u32 olen, __u32 kind, __u32 len,
				     struct opt_walk *w)
{
	w->olen = olen;
	w->i = 0;
	w->kind = kind;
	w->len = len;
	w->found = N_NONE;
	if (olen == 0)
		return;
	// The length masked in an instruction of its own, so the verifier
	// knows it is 1..64 (clang's merged range checks do not tell it).
	if (olen > 40 || bpf_skb_load_bytes(skb, off, w->opts, AT(olen - 1) + 1) < 0) {
		w->found = N_BAD;
		return;
	}
	bpf_loop(40, opt_step, w, 0);
}

// The NGWA option among the IPv4 options (as wire::ipv4's ngwa_offset;
// SPEC.md 2.6: type 33, 6 bytes).
static __always_inline void ngwa_find(struct __sk_buff *skb, const struct seg *s, struct opt_walk *w)
{
	opt_find(skb, s->ip_off + 20, s->ihl - 20, 33, 6, w);
}

// The big-endian 32-bit value at `at` of a 64-byte option buffer.
static __always_inline __u32 be32_at(const __u8 *p, __u32 at)
{
	return ((__u32)p[AT(at)] << 24) | ((__u32)p[AT(at + 1)] << 16) | ((__u32)p[AT(at + 2)] << 8) | p[AT(at + 3)];
}

// NGWA's MSS clamp on a SYN (seed 001 section 4.2: "a reduction of the MSS
// by the size of NGWA option"): at most MTU - 40 - 8, so that a full
// segment still fits once marked; RFC 1624 update of the TCP checksum over
// the aligned 16-bit words the value spans.
static __always_inline void ngwa_clamp_mss(struct __sk_buff *skb, const struct seg *s)
{
	struct opt_walk w = {};
	opt_find(skb, s->tcp_off + 20, s->doff - 20, 2, 4, &w); // MSS (RFC 9293 section 3.2)
	if (w.found < 0)
		return;
	__u32 i = w.found;
	__u16 max = ngwa_mtu > 48 ? ngwa_mtu - 48 : 0;
	__u16 mss = ((__u16)w.opts[AT(i + 2)] << 8) | w.opts[AT(i + 3)];
	if (mss <= max)
		return;
	// The 4 aligned bytes holding the value: kind, len, value (i even), or
	// len, value, the next byte (i odd, so the option area goes on past
	// it: its length is a multiple of 4).
	__u32 at = (i & 1) ? i + 1 : i;
	if (at + 4 > w.olen)
		return;
	__u8 old[4] = { w.opts[AT(at)], w.opts[AT(at + 1)], w.opts[AT(at + 2)], w.opts[AT(at + 3)] };
	__u8 neu[4] = { old[0], old[1], old[2], old[3] };
	if (i & 1) {
		neu[1] = max >> 8;
		neu[2] = max & 0xff;
	} else {
		neu[2] = max >> 8;
		neu[3] = max & 0xff;
	}
	__u32 o, v;
	__builtin_memcpy(&o, old, 4);
	__builtin_memcpy(&v, neu, 4);
	if (bpf_l4_csum_replace(skb, s->tcp_off + 16, o, v, sizeof(__u32)) < 0)
		return;
	if (bpf_skb_store_bytes(skb, s->tcp_off + 20 + at, neu, 4, 0) < 0)
		return;
	// Both directions' in the first block, as the packet datapath counts
	// them (NgwaWireStats::mss_clamped of its A -> B wire).
	ngwa_count(0, N_MSS_CLAMPED);
}

// NGWA's router rule (seed 001 section 2: if W_packet > W_node then
// W_packet = W_node; a packet without the option gets one), as
// NgwaRouter::on_tcp_departure with the W_node of the last tick. An
// inserted option is [33, 6, value (4 bytes)] and two NOPs at the front of
// the option area, as wire::ipv4::insert_ngwa writes it.
static __always_inline void ngwa_mark(struct __sk_buff *skb, struct seg *s, __u8 dir)
{
	__u32 d = dir;
	struct nr_node *node = bpf_map_lookup_elem(&ngwa_node, &d);
	if (!node || !node->valid)
		return;
	__u32 w = node->w;
	struct opt_walk ow = {};
	ngwa_find(skb, s, &ow);
	int at = ow.found;
	if (at == N_BAD) {
		ngwa_count(dir, N_BAD_OPTIONS);
		return;
	}
	if (at >= 0) {
		if (at > 34)
			return;
		__u32 carried = be32_at(ow.opts, at + 2);
		if (carried <= w) {
			ngwa_count(dir, N_KEPT);
			return;
		}
		__u32 be = bpf_htonl(w);
		if (bpf_skb_store_bytes(skb, s->ip_off + 20 + at + 2, &be, 4, 0) < 0)
			return;
		ipv4_fill_checksum(skb, s->ip_off, s->ihl);
		ngwa_count(dir, N_LOWERED);
		return;
	}
	// wire::ipv4::ngwa_insertable: room in the header, and in the MTU (for
	// a GSO packet, each segment it becomes).
	if (s->ihl + 8 > 60) {
		ngwa_count(dir, N_OPTIONS_FULL);
		return;
	}
	__u32 len = skb->gso_size ? s->ihl + s->doff + skb->gso_size : s->total;
	if (len + 8 > ngwa_mtu) {
		ngwa_count(dir, N_TOO_BIG);
		return;
	}
	// The room goes after the 20 fixed bytes of the IPv4 header
	// (BPF_ADJ_ROOM_NET); the segments of a GSO packet keep their size.
	if (s->ip_off != ETH_HLEN ||
	    bpf_skb_adjust_room(skb, 8, BPF_ADJ_ROOM_NET, BPF_F_ADJ_ROOM_FIXED_GSO) < 0) {
		ngwa_count(dir, N_UNSUPPORTED);
		return;
	}
	__u8 opt[8] = { 33, 6, w >> 24, w >> 16, w >> 8, w, 1, 1 };
	__u8 vihl = 0x40 | ((s->ihl + 8) >> 2);
	__u16 total = bpf_htons(s->total + 8);
	if (bpf_skb_store_bytes(skb, s->ip_off + 20, opt, 8, 0) < 0 ||
	    bpf_skb_store_bytes(skb, s->ip_off, &vihl, 1, 0) < 0 ||
	    bpf_skb_store_bytes(skb, s->ip_off + 2, &total, 2, 0) < 0)
		return;
	s->ihl += 8;
	s->total += 8;
	s->tcp_off += 8;
	ipv4_fill_checksum(skb, s->ip_off, s->ihl);
	ngwa_count(dir, N_INSERTED);
}

// NGWA's receiver edge (SPEC.md 2.6, last point), on data A -> B: the value
// the segment carries goes into its flow's `seen` entry (a segment with
// payload only, as NgwaEdge::on_inband), and the option leaves the packet.
// Our own insertion (the option and its two NOPs at the front) is undone
// byte for byte, as wire::ipv4::strip_ngwa does; an option elsewhere
// becomes NOPs.
static __always_inline void ngwa_strip(struct __sk_buff *skb, struct seg *s, struct nr_seen *e)
{
	struct opt_walk ow = {};
	ngwa_find(skb, s, &ow);
	int at = ow.found;
	if (at < 0 || at > 34)
		return;
	__u32 v = be32_at(ow.opts, at + 2);
	ngwa_count(0, N_VALUES_READ);
	if (e && s->payload_len > 0) {
		__sync_fetch_and_add(&e->ngwa_sum, v);
		__sync_fetch_and_add(&e->ngwa_n, 1);
		e->ngwa_last = v;
	}
	if (at == 0 && s->ihl >= 28 && ow.opts[6] == 1 && ow.opts[7] == 1 && s->ip_off == ETH_HLEN &&
	    bpf_skb_adjust_room(skb, -8, BPF_ADJ_ROOM_NET, BPF_F_ADJ_ROOM_FIXED_GSO) == 0) {
		__u8 vihl = 0x40 | ((s->ihl - 8) >> 2);
		__u16 total = bpf_htons(s->total - 8);
		bpf_skb_store_bytes(skb, s->ip_off, &vihl, 1, 0);
		bpf_skb_store_bytes(skb, s->ip_off + 2, &total, 2, 0);
		s->ihl -= 8;
		s->total -= 8;
		s->tcp_off -= 8;
	} else {
		__u8 nops[6] = { 1, 1, 1, 1, 1, 1 };
		if (bpf_skb_store_bytes(skb, s->ip_off + 20 + at, nops, 6, 0) < 0)
			return;
	}
	ipv4_fill_checksum(skb, s->ip_off, s->ihl);
	ngwa_count(0, N_STRIPPED);
}


SEC("classifier")
int nr_data(struct __sk_buff *skb)
{
	struct seg s = {};
	if (!classify(skb, &s, 0))
		return TC_ACT_OK;
	if (ngwa_router && (s.flags & TCP_SYN))
		ngwa_clamp_mss(skb, &s); // before the SYN is reported: the flow table learns the clamped MSS
	struct nr_seen *e;
	see(skb, &s, 0, &e);
	if (ngwa_router)
		ngwa_mark(skb, &s, 0);
	if (ngwa_edge)
		ngwa_strip(skb, &s, e);
	return TC_ACT_OK;
}

// Lowers the window of an ACK B -> A to its flow's rule: SPEC.md section 1,
// as control::gateway::lowered_field.
static __always_inline void rewrite_window(struct __sk_buff *skb, const struct seg *s, const struct nr_window *w,
					   struct nr_seen *e)
{
	// Wr = window << scale (RFC 7323 section 2.3).
	__u32 shift = w->shift & 15;
	__u16 raw = bpf_ntohs(s->window);
	__u64 wr = (__u64)raw << shift;
	__u64 want = w->den ? wr * w->num / w->den : w->num;
	if (w->keep_edge && e) {
		// NgwaEdge::window: min(Wr, rule), but never less than what is
		// left of the window already offered (RFC 9293 section
		// 3.8.6.2.2): edge - ACK, in sequence arithmetic.
		if (want > wr)
			want = wr;
		__u32 ack = bpf_ntohl(s->ack);
		if (e->edge_set) {
			__s32 left = (__s32)(e->edge - ack);
			if (left > 0 && (__u64)left > want)
				want = left;
		}
		if (want > wr)
			want = wr;
		e->edge = ack + (__u32)want;
		e->edge_set = 1;
	}
	// new = min(Wr, max(rule, floor)) (SPEC.md section 1 rules 1 and 4).
	if (want < w->floor)
		want = w->floor;
	if (want >= wr)
		return;
	// Rounded up to the scale unit, never zero.
	__u64 field = (want + (1ULL << shift) - 1) >> shift;
	if (field < 1)
		field = 1;
	if (field >= raw)
		return;
	__u16 new_be = bpf_htons((__u16)field);
	// RFC 1624 incremental update of the TCP checksum (the window is not in
	// the pseudo-header).
	if (bpf_l4_csum_replace(skb, s->tcp_off + 16, s->window, new_be, sizeof(__u16)) < 0)
		return;
	if (bpf_skb_store_bytes(skb, s->tcp_off + 14, &new_be, sizeof(new_be), 0) < 0)
		return;
	count(C_ACKS_REWRITTEN, 1);
}

SEC("classifier")
int nr_ack(struct __sk_buff *skb)
{
	struct seg s = {};
	if (!classify(skb, &s, 1))
		return TC_ACT_OK;
	if (ngwa_router && (s.flags & TCP_SYN))
		ngwa_clamp_mss(skb, &s);
	struct nr_seen *e;
	struct nr_window *w = see(skb, &s, 1, &e);
	if (w && !(s.flags & (TCP_SYN | TCP_RST)) && (s.flags & TCP_ACK)) {
		count(C_ACKS_SEEN, 1);
		if (w->rule_on)
			rewrite_window(skb, &s, w, e);
	}
	// The router marks this direction too, as the packet datapath's
	// second NgwaWire: after the window, whose offset the option moves.
	if (ngwa_router)
		ngwa_mark(skb, &s, 1);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
