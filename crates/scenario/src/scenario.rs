//! Scenario files (TOML): the schema, parameter substitution and validation.
//!
//! A scenario declares named parameters in `[params]`; anywhere else a
//! string `"{name}"` stands for that parameter's value, with its type. The
//! command line overrides parameters (`--set flows=24`). Every error names
//! the file, the field and what is allowed.

use netreturn_base::units::{RateQ, Size, SizeQ, TimeQ};
pub use netreturn_control::queue::aqm::AqmParams as AqmSpec;
pub use netreturn_control::queue::RedParams as RedSpec;
pub use netreturn_control::{GatewayParams, Method as QueueMethod};
pub use netreturn_tcp::CcName;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// IPv4 header without options (RFC 791).
pub const IP_HEADER: u32 = 20;
/// TCP header without options (RFC 9293 section 3.1).
pub const TCP_HEADER: u32 = 20;
/// The timestamp option as Linux and ns-3 send it: 10 bytes and two NOPs
/// (RFC 7323 section 3).
pub const TS_OPTION: u32 = 12;

/// What one packet ("1p") weighs, wherever a scenario gives a size in
/// packets (queue buffers, RED thresholds, controller keys, TCP buffers,
/// transfer sizes, NGWA's Wmax): a full segment of `segment_size` payload
/// bytes with its IPv4, TCP and timestamp headers, as it sits in a queue
/// (1458 + 52 = 1510 bytes by default). docs/scenarios.md states it.
pub fn packet_bytes(segment_size: u32) -> u32 {
    segment_size + IP_HEADER + TCP_HEADER + TS_OPTION
}

/// A scenario error: which file, which field, what went wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    pub field: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: field `{}`: {}", self.file, self.field, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    /// The file it was read from (for error messages); empty if built in code.
    #[serde(skip)]
    pub file: String,
    #[serde(default)]
    pub description: String,
    /// Where in the papers this experiment comes from.
    #[serde(default)]
    pub reference: String,
    /// Parameters after overrides (kept for the record and for reports).
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub run: RunSpec,
    #[serde(default)]
    pub tcp: TcpSpec,
    pub topology: TopologySpec,
    #[serde(default)]
    pub traffic: Vec<TrafficSpec>,
    /// NGWA's modes, end hosts and marking routers (seed 001; `crate::ngwa`).
    #[serde(default)]
    pub ngwa: Option<crate::ngwa::NgwaSpec>,
    /// The paper's own numbers, free-form, for reports.
    #[serde(default)]
    pub paper: Option<toml::Value>,
    /// The file as read, with parameters substituted (quantities as
    /// written): what the Python testbed maps onto namespaces, so that it
    /// reads the file through this loader rather than its own.
    #[serde(skip)]
    pub document: toml::Table,
    /// Which field took which parameter, and how the user set it: (field,
    /// " (from --set flows=3100)"), for errors found after loading.
    #[serde(skip)]
    pub provenance: Vec<(String, String)>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Hard stop; a run also ends when every finite transfer is complete.
    #[serde(default = "default_stop")]
    pub stop: TimeQ,
    /// Number of seeds a plain `netreturn run` replicates over.
    #[serde(default = "default_seeds")]
    pub seeds: u32,
    /// Period of the queue and window time series.
    #[serde(default = "default_sample")]
    pub sample_interval: TimeQ,
    /// TCP flows (by index) whose cwnd / rwnd / RTT are traced.
    #[serde(default)]
    pub trace_flows: Vec<usize>,
    /// Interfaces (by name, e.g. "R1->R2") written to a pcap file.
    #[serde(default)]
    pub pcap: Vec<String>,
    /// Interface whose queue and utilization are the run's headline
    /// (defaults to the topology's bottleneck).
    #[serde(default)]
    pub monitor: Option<String>,
    /// Ignore metrics of flows that start before this time (warm-up).
    #[serde(default)]
    pub warmup: Option<TimeQ>,
    /// Phase randomization: each link's one-way delay grows by an offset
    /// drawn per seed, uniform in [0, phase), the same for both directions
    /// ([`crate::resolve::phase_offset`]; the ns-3 harness draws the same
    /// offsets). 0 (the default) keeps the delays as written.
    #[serde(default)]
    pub phase: Option<TimeQ>,
}

fn default_stop() -> TimeQ {
    TimeQ(netreturn_base::Time::from_secs(3600))
}
fn default_seeds() -> u32 {
    30
}
fn default_sample() -> TimeQ {
    TimeQ(netreturn_base::Time::from_millis(10))
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            stop: default_stop(),
            seeds: default_seeds(),
            sample_interval: default_sample(),
            trace_flows: vec![],
            pcap: vec![],
            monitor: None,
            warmup: None,
            phase: None,
        }
    }
}

/// TCP settings for every endpoint of the scenario. Defaults are ns-3
/// 3.44's (SPEC.md section 6) except the segment size and buffers, which the
/// papers set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    #[serde(default = "default_cc")]
    pub cc: CcName,
    /// Payload bytes per full segment.
    #[serde(default = "default_segment")]
    pub segment_size: u32,
    #[serde(default = "default_buf")]
    pub rcv_buf: SizeQ,
    #[serde(default = "default_buf")]
    pub snd_buf: SizeQ,
    /// The receiver may move the right edge of its window left (an NGWA
    /// receiver's falling `Wngwa` applied at once); `false` (the default)
    /// keeps RFC 9293 section 3.8.6.2.2's edge (docs/ngwa.md).
    #[serde(default)]
    pub shrink_window: bool,
    /// The advertised window is `rcv_buf` less the out-of-order bytes
    /// held (the default, as Linux); `false` offers the whole `rcv_buf`
    /// from RCV.NXT, as ns-3 3.44's receiver (docs/tcp.md).
    #[serde(default = "yes")]
    pub window_deducts_ooo: bool,
    #[serde(default = "yes")]
    pub sack: bool,
    /// Without SACK, a duplicate ACK must carry the window of the previous
    /// ACK (RFC 5681 section 2); `false` counts it whatever its window, as
    /// ns-3 does (docs/tcp.md, "Duplicate ACKs behind a gateway").
    #[serde(default = "yes")]
    pub dupack_same_window: bool,
    /// Without SACK, only the first partial ACK of a NewReno recovery
    /// restarts the retransmission timer (RFC 6582 section 3.2 step 5,
    /// "Impatient"); `false` restarts it on every one ("Slow-but-Steady",
    /// as Linux; docs/tcp.md).
    #[serde(default = "yes")]
    pub newreno_impatient: bool,
    /// With SACK, only the first partial ACK of a recovery restarts the
    /// retransmission timer, as ns-3 does; `false` (the default) restarts
    /// it on every ACK that advances SND.UNA (RFC 6298 (5.3), Linux).
    #[serde(default)]
    pub sack_impatient: bool,
    /// The fast retransmit restarts the retransmission timer (ns-2.35
    /// `tcp-newreno.cc` `dupack_action`: `reset_rtx_timer(1,0)`; Linux
    /// `tcp_xmit_retransmit_queue` rearms it on retransmitting the head);
    /// `false` leaves a running timer alone (RFC 6298 (5.1), ns-3).
    #[serde(default)]
    pub rto_restart_on_fast_retransmit: bool,
    /// Limited transmit (RFC 3042): a new segment on each of the first two
    /// duplicate ACKs; `false` sends nothing on them (ns-2.35 `singledup_ 0`).
    #[serde(default = "yes")]
    pub limited_transmit: bool,
    /// Limited transmit also releases the next segment of a go-back-N after
    /// a timeout (ns-2.35 `TcpAgent::send_one`); `false` (the default) only
    /// new data (RFC 3042 section 2, ns-3, Linux).
    #[serde(default)]
    pub limited_transmit_resends: bool,
    /// In a SACK recovery, a lost retransmission of the segment at SND.UNA
    /// is sent again once data first sent after it is SACKed (Linux RACK,
    /// RFC 8985 section 6.2); `false` (the default) waits for the
    /// retransmission timer (RFC 6675) (docs/tcp.md).
    #[serde(default)]
    pub resend_lost_retransmit: bool,
    /// A classic ECN receiver keeps echoing ECE past the sender's CWR when
    /// a CE mark arrived since its last ACK, as ns-3 3.44; `false` (the
    /// default) a CWR ends the echo (RFC 3168 section 6.1.3, Linux).
    #[serde(default)]
    pub ecn_echo_past_cwr: bool,
    /// A classic ECN sender reduces on an ECE only when the ACK advances
    /// SND.UNA, as ns-3 3.44; `false` (the default) on any ACK (RFC 3168
    /// section 6.1.2, Linux) (docs/tcp.md).
    #[serde(default)]
    pub ece_on_new_ack_only: bool,
    /// The receiver opens its window as Linux does: 64 KiB, then twice
    /// the bytes received, up to `rcv_buf`; `false` (the default) offers
    /// the whole `rcv_buf` at once (docs/tcp.md).
    #[serde(default)]
    pub rcv_window_opens: bool,
    /// A duplicate ACK moves the send window only up (or to zero), as
    /// Linux's `tcp_may_update_window`; `false` (the default) any window,
    /// RFC 9293 section 3.10.7.4 (docs/tcp.md).
    #[serde(default)]
    pub window_update_grows_only: bool,
    /// A go-back-N resend ends at SND.MAX, new data in segments of its own
    /// (ns-3's sent list, Linux's retransmission queue); `false` (the
    /// default) cuts full segments from SND.NXT, the last one carrying new
    /// bytes up to the right edge (docs/tcp.md).
    #[serde(default)]
    pub resend_ends_at_snd_max: bool,
    /// A resend takes the segment at SND.NXT as first sent and the next
    /// one, at most an MSS, as ns-3's sent list; implies
    /// `resend_ends_at_snd_max` (docs/tcp.md).
    #[serde(default)]
    pub resend_merges_sent: bool,
    #[serde(default = "yes")]
    pub timestamps: bool,
    #[serde(default = "yes")]
    pub window_scaling: bool,
    #[serde(default = "default_delack")]
    pub delayed_ack_count: u32,
    #[serde(default = "default_delack_timeout")]
    pub delayed_ack_timeout: TimeQ,
    #[serde(default = "default_min_rto")]
    pub min_rto: TimeQ,
    #[serde(default = "default_iw")]
    pub initial_cwnd: u32,
    /// Loss recovery with SACK: PRR (RFC 6937, ns-3's default) or the
    /// classic RFC 6675 `cwnd = ssthresh`.
    #[serde(default = "default_recovery")]
    pub recovery: RecoveryName,
    /// How a loss sets ssthresh (RFC 5681 (4)'s FlightSize, at a fast
    /// retransmit and a timeout): `"rfc5681"` (the default) SND.MAX -
    /// SND.UNA; `"ns3"` RFC 6675's pipe with SACK, as ns-3 3.44; `"linux"`
    /// cwnd, and a timeout inside a recovery keeps its ssthresh, as Linux
    /// (`netreturn_tcp::LossSsthresh`).
    #[serde(default = "default_loss_ssthresh")]
    pub loss_ssthresh: LossSsthreshName,
    /// With SACK and ECN, what a loss found during an ECN window reduction
    /// starts: `"linux"` (the default) a fast recovery that continues the
    /// reduction, as Linux; `"ns3"` none, the holes repaired under the CWR
    /// state, as ns-3 3.44 (`netreturn_tcp::RecoveryFromCwr`).
    #[serde(default = "default_recovery_from_cwr")]
    pub recovery_from_cwr: RecoveryFromCwrName,
    /// PRR's bound when the pipe is at or below ssthresh: `"ssrb"` (the
    /// default) RFC 6937's PRR-SSRB on every ACK; `"safeack"` the
    /// conservative bound with one more MSS only on an ACK that advances
    /// SND.UNA and marks no further loss, as RFC 9937, Linux and ns-3
    /// (`netreturn_tcp::PrrBound`).
    #[serde(default = "default_prr_bound")]
    pub prr_bound: PrrBoundName,
    /// Tick of the timestamp clock (RFC 7323 TSval); SARBE's samples are
    /// quantized to it. Default 1 ms (ns-3, Linux).
    #[serde(default = "default_ts_tick")]
    pub ts_tick: TimeQ,
    /// Offer ECN (RFC 3168): data carries ECT(0), and a CE mark halves the
    /// window as a loss would, without a retransmission. DCTCP and Prague
    /// always offer it. Default off, as ns-3 (`UseEcn`) and Linux
    /// (`tcp_ecn = 2`: only when asked) for outgoing connections.
    #[serde(default)]
    pub ecn: bool,
    /// Each congestion control's own table (`tcp.cubic = { hystart = false
    /// }`, `tcp.sarbe = { restore_cwnd = false }`, `tcp.xcp = {
    /// ignore_handshake_rtt = true }`: the keys of `netreturn_tcp::CcParams`),
    /// read apart from the other keys of `[tcp]` (see
    /// [`Scenario::from_toml`]).
    #[serde(skip)]
    pub cc_params: netreturn_tcp::CcParams,
}

fn default_ts_tick() -> TimeQ {
    TimeQ(netreturn_base::Time::from_millis(1))
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryName {
    Prr,
    Classic,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LossSsthreshName {
    Rfc5681,
    Ns3,
    Linux,
    Ns2,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryFromCwrName {
    Linux,
    Ns3,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PrrBoundName {
    Ssrb,
    SafeAck,
}

fn default_prr_bound() -> PrrBoundName {
    PrrBoundName::Ssrb
}

fn default_recovery_from_cwr() -> RecoveryFromCwrName {
    RecoveryFromCwrName::Linux
}

fn default_loss_ssthresh() -> LossSsthreshName {
    LossSsthreshName::Rfc5681
}

fn default_recovery() -> RecoveryName {
    RecoveryName::Prr
}

fn default_cc() -> CcName {
    CcName::Cubic
}
fn default_segment() -> u32 {
    1458
}
fn default_buf() -> SizeQ {
    SizeQ(Size::Bytes(1 << 20))
}
fn yes() -> bool {
    true
}
fn default_delack() -> u32 {
    2
}
fn default_delack_timeout() -> TimeQ {
    TimeQ(netreturn_base::Time::from_millis(200))
}
fn default_min_rto() -> TimeQ {
    TimeQ(netreturn_base::Time::from_secs(1))
}
fn default_iw() -> u32 {
    10
}

impl Default for TcpSpec {
    fn default() -> Self {
        toml::from_str("").expect("all TCP fields have defaults")
    }
}

/// One direction of a point-to-point link (the other direction gets the same
/// rate, delay and buffer under DropTail, unless the builder says otherwise).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate: RateQ,
    /// One-way propagation delay...
    #[serde(default)]
    pub delay: Option<TimeQ>,
    /// ...or the round-trip propagation delay of the link (delay = rtt / 2),
    /// as the papers' tables give it.
    #[serde(default)]
    pub rtt: Option<TimeQ>,
    #[serde(default = "default_method")]
    pub queue: QueueMethod,
    /// Queue capacity: bytes ("97kB") or packets ("100p").
    #[serde(default = "default_buffer")]
    pub buffer: SizeQ,
    /// Bernoulli loss probability per packet on this link (lossy / wireless).
    #[serde(default)]
    pub loss: f64,
    /// Which directions `loss` applies to: `both` (the default) or
    /// `forward` only (the direction this spec describes: a wireless hop
    /// that loses data packets and not the ACKs, seed 004).
    #[serde(default)]
    pub loss_direction: LossDirection,
    /// Gateway parameters (read when `queue` names a gateway):
    /// `{ ewt = { st = "29kB" }, awm = { ... }, assume_wscale = 7 }`.
    #[serde(default)]
    pub gateway: Option<GatewayParams>,
    /// RED parameters overriding the Linux-like preset.
    #[serde(default)]
    pub red: Option<RedSpec>,
    /// The dequeue-time AQMs' parameters over their defaults (`aqm = {
    /// target = "5ms", ecn = true }`).
    #[serde(default)]
    pub aqm: Option<AqmSpec>,
    /// The other direction's queue (b -> a): by default DropTail with the
    /// same buffer. Any queue discipline or gateway may run there too, e.g.
    /// AWM on both directions of a link carrying flows both ways (seed 002,
    /// footnote 1): `reverse = { queue = "awm" }`.
    #[serde(default)]
    pub reverse: Option<ReverseSpec>,
}

/// The queue of a link's reverse direction; what is left out is as the
/// default (DropTail, the forward direction's buffer).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ReverseSpec {
    #[serde(default)]
    pub queue: Option<QueueMethod>,
    #[serde(default)]
    pub buffer: Option<SizeQ>,
    #[serde(default)]
    pub gateway: Option<GatewayParams>,
    #[serde(default)]
    pub red: Option<RedSpec>,
    #[serde(default)]
    pub aqm: Option<AqmSpec>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LossDirection {
    #[default]
    Both,
    Forward,
}

fn default_method() -> QueueMethod {
    QueueMethod::Queue(netreturn_control::QueueKind::DropTail)
}
/// A link's buffer when the file gives none, in packets: ns-3's default
/// device queue. The real gateway's queues default to it too.
pub const DEFAULT_BUFFER_PACKETS: u32 = 100;

fn default_buffer() -> SizeQ {
    SizeQ(Size::Packets(DEFAULT_BUFFER_PACKETS))
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
// Read once per run from a file: the size of the largest variant costs
// nothing, and boxing it would show in every pattern.
#[allow(clippy::large_enum_variant)]
pub enum TopologySpec {
    /// n sources -> R1 -> R2 -> n receivers (seed 000 Fig. 4). Hosts are
    /// `left0..`, `right0..`; groups `left`, `right`; the bottleneck
    /// interface is `R1->R2`.
    Dumbbell { pairs: u32, access: LinkSpec, bottleneck: LinkSpec, receivers: LinkSpec },
    /// A chain of routers R0..Rk joined by `hops` links (parking lot, seed
    /// 002 section 3.5). Each router Ri has `hosts_per_router` hosts
    /// `hRi_j` (groups `at0`..`atk`) on access links; `end_hosts` hosts
    /// `src0..`/`dst0..` hang off R0 and Rk (groups `src`, `dst`).
    Chain {
        hops: u32,
        link: LinkSpec,
        /// Per-hop overrides, by hop index.
        #[serde(default)]
        overrides: BTreeMap<String, LinkSpec>,
        access: LinkSpec,
        #[serde(default)]
        hosts_per_router: u32,
        #[serde(default)]
        end_hosts: u32,
    },
    /// One bottleneck R1->R2 shared by `flows` sender/receiver pairs whose
    /// access links give each pair its own round-trip time:
    /// rtt_i = base_rtt + step * i (seed 002 Table 1 case 2).
    MultiRtt { pairs: u32, bottleneck: LinkSpec, access_rate: RateQ, base_rtt: TimeQ, step: TimeQ },
    /// An explicit graph.
    Graph {
        nodes: Vec<String>,
        links: Vec<GraphLink>,
        #[serde(default)]
        groups: BTreeMap<String, Vec<String>>,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub from: String,
    pub to: String,
    #[serde(flatten)]
    pub spec: LinkSpec,
}

/// A random or fixed time.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Dist {
    Fixed(TimeQ),
    Uniform { uniform: [TimeQ; 2] },
    Exponential { exponential: TimeQ },
}

impl Default for Dist {
    fn default() -> Self {
        Dist::Fixed(TimeQ(netreturn_base::Time::ZERO))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum TrafficSpec {
    /// `count` TCP transfers of `bytes` each (flow i from `from`[i], to
    /// `to`[i], cycling through the groups).
    TcpFile {
        from: String,
        to: String,
        #[serde(default = "one")]
        count: u32,
        bytes: SizeQ,
        #[serde(default)]
        start: Dist,
        #[serde(default = "default_port")]
        port: u16,
    },
    /// Long-lived TCP transfers from `start` until `stop` (or the run's end).
    TcpBulk {
        from: String,
        to: String,
        #[serde(default = "one")]
        count: u32,
        #[serde(default)]
        start: Dist,
        #[serde(default)]
        stop: Option<TimeQ>,
        #[serde(default = "default_port")]
        port: u16,
        /// This traffic's congestion control instead of `[tcp] cc` (flows
        /// of different controls sharing a link, seed 004 Fig. 5b).
        #[serde(default)]
        cc: Option<CcName>,
    },
    /// An application-rate-limited TCP source: writes of `packet` bytes at
    /// `rate` into the connection's send buffer, a write that does not fit
    /// being lost to the application, as ns-3's OnOffApplication over TCP
    /// sending continuously (seed 001 section 3). At `stop` the application
    /// closes the connection: the FIN follows the data already written.
    TcpRate {
        from: String,
        to: String,
        #[serde(default = "one")]
        count: u32,
        rate: RateQ,
        /// Bytes per write (ns-3 OnOffApplication's PacketSize, 512).
        #[serde(default = "default_app_packet")]
        packet: u32,
        #[serde(default)]
        start: Dist,
        #[serde(default)]
        stop: Option<TimeQ>,
        #[serde(default = "default_port")]
        port: u16,
    },
    /// Short web-like TCP transfers (the XCP paper's and seed 002's mice,
    /// SPEC.md 2.7): arrivals a Poisson process of `rate` new flows per
    /// second from `start` to `stop` (default: the run's stop), sizes
    /// Pareto with mean `mean_size` (default 30 packets) and `shape`
    /// (default 1.35). Arrival k goes from `from`[k] to `to`[k], cycling.
    TcpWeb {
        from: String,
        to: String,
        rate: f64,
        #[serde(default = "default_web_size")]
        mean_size: SizeQ,
        #[serde(default = "default_web_shape")]
        shape: f64,
        #[serde(default)]
        start: Option<TimeQ>,
        #[serde(default)]
        stop: Option<TimeQ>,
        #[serde(default = "default_port")]
        port: u16,
    },
    /// Constant-bit-rate UDP.
    UdpCbr {
        from: String,
        to: String,
        #[serde(default = "one")]
        count: u32,
        rate: CbrRate,
        #[serde(default = "default_udp_packet")]
        packet: u32,
        #[serde(default)]
        start: Dist,
        #[serde(default)]
        stop: Option<TimeQ>,
        /// Rate changes: `[[time, rate], ...]` in time order; `rate` holds
        /// before the first. A rate of 0 pauses the source.
        #[serde(default)]
        schedule: Vec<(TimeQ, CbrRate)>,
    },
    /// UDP On/Off source: exponential on and off periods, `rate` while on.
    UdpOnOff {
        from: String,
        to: String,
        #[serde(default = "one")]
        count: u32,
        rate: CbrRate,
        #[serde(default = "default_udp_packet")]
        packet: u32,
        on: TimeQ,
        off: TimeQ,
        #[serde(default)]
        start: Dist,
        #[serde(default)]
        stop: Option<TimeQ>,
    },
}

fn one() -> u32 {
    1
}
fn default_web_size() -> SizeQ {
    SizeQ(Size::Packets(30))
}
fn default_web_shape() -> f64 {
    1.35
}
fn default_port() -> u16 {
    80
}
fn default_app_packet() -> u32 {
    512
}
fn default_udp_packet() -> u32 {
    1400
}

const TOPOLOGY_KINDS: &[&str] = &["dumbbell", "chain", "multi-rtt", "graph"];
const TRAFFIC_KINDS: &[&str] = &["tcp-file", "tcp-bulk", "tcp-rate", "tcp-web", "udp-cbr", "udp-on-off"];

/// Turns `{ kind = "k", rest.. }` into `{ k = { rest.. } }`.
fn untag(
    v: &mut toml::Value,
    at: &str,
    kinds: &[&str],
    tags: &mut Vec<(String, String)>,
) -> Result<(), (String, String)> {
    let toml::Value::Table(t) = v else {
        return Err((at.to_string(), "expected a table".into()));
    };
    let kind = match t.remove("kind") {
        Some(toml::Value::String(k)) if kinds.contains(&k.as_str()) => k,
        Some(other) => {
            return Err((format!("{at}.kind"), format!("unknown kind {other}; allowed: {}", kinds.join(", "))))
        }
        None => return Err((format!("{at}.kind"), format!("missing; allowed: {}", kinds.join(", ")))),
    };
    let rest = std::mem::take(t);
    t.insert(kind.clone(), toml::Value::Table(rest));
    tags.push((at.to_string(), kind));
    Ok(())
}

/// A UDP source's rate, in its schedule too: any rate, or 0 (a number)
/// for a paused source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CbrRate(pub netreturn_base::Rate);

impl<'de> Deserialize<'de> for CbrRate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = toml::Value::deserialize(d)?;
        match v {
            toml::Value::Integer(0) => Ok(CbrRate(netreturn_base::Rate(0))),
            toml::Value::Float(0.0) => Ok(CbrRate(netreturn_base::Rate(0))),
            v => RateQ::deserialize(v).map(|r| CbrRate(r.0)).map_err(serde::de::Error::custom),
        }
    }
}

/// Replaces every string `"{name}"` with the parameter's value, noting in
/// `seen` which field took which parameter (so an error in the field can
/// name the parameter the user set).
fn substitute(
    v: &mut toml::Value,
    params: &BTreeMap<String, toml::Value>,
    path: &str,
    seen: &mut Vec<(String, String)>,
) -> Result<(), (String, String)> {
    match v {
        toml::Value::String(s) => {
            if let Some(name) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
                match params.get(name) {
                    Some(p) => {
                        seen.push((path.to_string(), name.to_string()));
                        *v = p.clone()
                    }
                    None => {
                        let known: Vec<&str> = params.keys().map(|k| k.as_str()).collect();
                        return Err((
                            path.to_string(),
                            format!("unknown parameter {{{name}}}; declared in [params]: {}", known.join(", ")),
                        ));
                    }
                }
            }
        }
        toml::Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                substitute(x, params, &format!("{path}[{i}]"), seen)?;
            }
        }
        toml::Value::Table(t) => {
            for (k, x) in t.iter_mut() {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                substitute(x, params, &p, seen)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether an override names a field by its path (`run.stop`,
/// `traffic[0].count`) rather than a `[params]` entry.
fn is_path(name: &str) -> bool {
    name.contains(['.', '['])
}

/// Sets the field at `path` (`topology.bottleneck.rate`, `traffic[1].count`)
/// of a scenario document. Every table and array element on the way must
/// exist; the last key may be new in its table (serde then checks it is a
/// field there). Errors say which part is missing and what is there.
fn set_path(root: &mut toml::Value, path: &str, value: toml::Value) -> Result<(), String> {
    // "a.b[2].c" -> [Key(a), Key(b), Index(2), Key(c)]
    enum Step<'a> {
        Key(&'a str),
        Index(usize),
    }
    let mut steps = vec![];
    for part in path.split('.') {
        let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if key.is_empty() && steps.is_empty() {
            return Err("a path starts with a table name, like topology.bottleneck.rate".into());
        }
        if !key.is_empty() {
            steps.push(Step::Key(key));
        }
        while !rest.is_empty() {
            let (n, after) = rest.split_once(']').ok_or_else(|| format!("unclosed [ in {part:?}"))?;
            let i = n.parse::<usize>().map_err(|_| format!("{n:?} is not an index in {part:?}"))?;
            steps.push(Step::Index(i));
            rest = after.strip_prefix('[').unwrap_or(after);
            if !after.is_empty() && !after.starts_with('[') {
                return Err(format!("unexpected {after:?} after ] in {part:?}"));
            }
        }
    }
    let (last, walk) = steps.split_last().ok_or("an empty path")?;
    let mut at = root;
    let mut here = String::new();
    for step in walk {
        at = match (step, at) {
            (Step::Key(k), toml::Value::Table(t)) => {
                let keys: Vec<String> = t.keys().cloned().collect();
                let next = t.get_mut(*k).ok_or_else(|| {
                    let within = if here.is_empty() { "the file".to_string() } else { here.clone() };
                    format!("no `{k}` in {within}; it has: {}", keys.join(", "))
                })?;
                here = if here.is_empty() { k.to_string() } else { format!("{here}.{k}") };
                next
            }
            (Step::Index(i), toml::Value::Array(a)) => {
                let n = a.len();
                here = format!("{here}[{i}]");
                a.get_mut(*i).ok_or_else(|| format!("{here} does not exist; there are {n}"))?
            }
            (Step::Key(k), _) => return Err(format!("{here} is not a table, so it has no `{k}`")),
            (Step::Index(_), _) => return Err(format!("{here} is not a list")),
        };
    }
    match (last, at) {
        (Step::Key(k), toml::Value::Table(t)) => {
            t.insert(k.to_string(), value);
            Ok(())
        }
        (Step::Index(i), toml::Value::Array(a)) if *i < a.len() => {
            a[*i] = value;
            Ok(())
        }
        (Step::Index(i), toml::Value::Array(a)) => Err(format!("{here}[{i}] does not exist; there are {}", a.len())),
        (_, _) => Err(format!("{here} is not a table or a list")),
    }
}

/// Parses an override value as TOML (numbers, booleans, quoted strings),
/// falling back to a bare string (`queue=red`).
pub fn parse_override(value: &str) -> toml::Value {
    let doc = format!("v = {value}");
    match doc.parse::<toml::Table>() {
        // One value and nothing after it: `queue="droptail"\nx = 1` once
        // read as "droptail", dropping the rest without a word; now the
        // whole text is the (bare string) value, which the field refuses.
        Ok(mut t) if t.len() == 1 => t.remove("v").unwrap_or_else(|| toml::Value::String(value.to_string())),
        _ => toml::Value::String(value.to_string()),
    }
}

impl Scenario {
    /// " (from --set NAME=VALUE)" if `field` took a parameter, else "".
    pub fn source_of(&self, field: &str) -> &str {
        self.provenance.iter().find(|(at, _)| at == field).map_or("", |(_, n)| n.as_str())
    }

    /// An error found after loading, at `field`: names the file, the field
    /// and, if the field took a parameter, how the user set it.
    pub fn error(&self, field: &str, message: String) -> ScenarioError {
        // A field inside a substituted table counts as the table's.
        let from = self.provenance.iter().find(|(at, _)| within(field, at)).map_or("", |(_, n)| n.as_str());
        let message = if message.ends_with(from) { message } else { message + from };
        ScenarioError { file: self.origin(), field: field.to_string(), message }
    }

    /// How errors found after parsing name the scenario: its file if known.
    pub fn origin(&self) -> String {
        if self.file.is_empty() {
            self.name.clone()
        } else {
            self.file.clone()
        }
    }

    /// Loads a scenario from TOML text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let err =
            |field: &str, message: String| ScenarioError { file: file.to_string(), field: field.to_string(), message };
        let mut doc: toml::Table =
            text.parse().map_err(|e: toml::de::Error| err("", e.message().to_string() + &span_hint(text, e.span())))?;
        let mut params = match doc.remove("params") {
            Some(toml::Value::Table(t)) => t.into_iter().collect::<BTreeMap<_, _>>(),
            Some(_) => return Err(err("params", "must be a table of name = value".into())),
            None => BTreeMap::new(),
        };
        // `--set topology.bottleneck.rate=5Mbps` names a field by its path:
        // applied to the document after the parameters are substituted.
        let mut paths: Vec<(&String, &String)> = vec![];
        for (name, value) in overrides {
            if is_path(name) {
                paths.push((name, value));
                continue;
            }
            let Some(old) = params.get(name) else {
                if let Some((_, new)) = RENAMED_PARAMS.iter().find(|(o, n)| o == name && params.contains_key(*n)) {
                    return Err(err(
                        &format!("params.{name}"),
                        format!("--set {name}: renamed; every bundled scenario calls the bottleneck's rate `{new}`: --set {new}={value}"),
                    ));
                }
                let known: Vec<&str> = params.keys().map(|k| k.as_str()).collect();
                return Err(err(
                    &format!("params.{name}"),
                    format!(
                        "--set names an unknown parameter; this scenario has: {}; any field can be set by its \
                         path, e.g. --set topology.bottleneck.rate=10Mbps",
                        known.join(", ")
                    ),
                ));
            };
            let new = parse_override(value);
            let compatible = matches!(
                (old, &new),
                (toml::Value::Integer(_), toml::Value::Integer(_))
                    | (toml::Value::Float(_), toml::Value::Float(_) | toml::Value::Integer(_))
                    | (toml::Value::Boolean(_), toml::Value::Boolean(_))
                    | (toml::Value::String(_), toml::Value::String(_))
                    | (toml::Value::Array(_), toml::Value::Array(_))
            );
            if !compatible {
                return Err(err(
                    &format!("params.{name}"),
                    format!("--set {name}={value}: expected {} like the default {old}", old.type_str()),
                ));
            }
            let new = match (old, new) {
                (toml::Value::Float(_), toml::Value::Integer(i)) => toml::Value::Float(i as f64),
                (_, n) => n,
            };
            params.insert(name.clone(), new);
        }
        let mut root = toml::Value::Table(doc);
        let mut seen = vec![];
        substitute(&mut root, &params, "", &mut seen).map_err(|(f, m)| err(&f, m))?;
        for (path, value) in paths {
            set_path(&mut root, path, parse_override(value))
                .map_err(|m| err(path, format!("--set {path}={value}: {m}")))?;
            seen.retain(|(at, _)| !within(at, path));
            seen.push((path.clone(), path.clone()));
        }
        // An error in a field that took a parameter names the parameter as
        // the user set it (`--set flows=-3`), not only the resolved field.
        // How the user set parameter `name`.
        let source = |name: &str| -> String {
            match (overrides.iter().rev().find(|(k, _)| k == name), params.get(name)) {
                (Some((_, v)), _) => format!(" (from --set {name}={v})"),
                (None, Some(p)) => format!(" (from params.{name} = {p})"),
                (None, None) => String::new(),
            }
        };
        let provenance = |field: &str| -> String {
            // (a field inside a substituted table counts as the table's)
            let hit = seen.iter().find(|(at, _)| within(field, at));
            hit.map_or(String::new(), |(_, name)| source(name))
        };
        let err = |field: &str, message: String| {
            let from = provenance(field);
            ScenarioError { file: file.to_string(), field: field.to_string(), message: message + &from }
        };
        let document = match &root {
            toml::Value::Table(t) => t.clone(),
            _ => unreachable!("a TOML document is a table"),
        };
        // Each congestion control's table moves out of `[tcp]` and is read
        // into `CcParams`; old flat keys get a hint to their table.
        expand_tcp_profile(&mut root).map_err(|(f, m)| err(&f, m))?;
        let cc_params = take_cc_tables(&mut root).map_err(|(f, m)| err(&f, m))?;
        // `kind = "dumbbell"` tables become `{ dumbbell = { ... } }`, which
        // serde reads as an externally tagged enum and, unlike an internally
        // tagged one, with the full path of any error inside.
        let mut tags: Vec<(String, String)> = vec![];
        if let toml::Value::Table(t) = &mut root {
            if let Some(v) = t.get_mut("topology") {
                untag(v, "topology", TOPOLOGY_KINDS, &mut tags).map_err(|(f, m)| err(&f, m))?;
            }
            if let Some(toml::Value::Array(a)) = t.get_mut("traffic") {
                for (i, v) in a.iter_mut().enumerate() {
                    untag(v, &format!("traffic[{i}]"), TRAFFIC_KINDS, &mut tags).map_err(|(f, m)| err(&f, m))?;
                }
            }
        }
        if let toml::Value::Table(t) = &mut root {
            t.insert("params".into(), toml::Value::Table(params.clone().into_iter().collect()));
        }
        let scenario: Scenario = serde_path_to_error::deserialize(root).map_err(|e| {
            let mut field = e.path().to_string();
            if field == "." {
                field.clear();
            }
            for (at, kind) in &tags {
                if let Some(rest) = field.strip_prefix(&format!("{at}.{kind}")) {
                    field = format!("{at}{rest}");
                }
            }
            err(&field, e.into_inner().to_string())
        })?;
        scenario.validate().map_err(|(f, m)| err(&f, m))?;
        let mut scenario = scenario;
        scenario.tcp.cc_params = cc_params;
        scenario.file = file.to_string();
        scenario.document = document;
        // Each substituted field took its own parameter (a substituted
        // table is not searched again): linear, where a search per field
        // took minutes on a file of 40 000 links.
        scenario.provenance = seen.iter().map(|(at, name)| (at.clone(), source(name))).collect();
        Ok(scenario)
    }

    pub fn from_file(path: &Path, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: file.clone(),
            field: String::new(),
            message: format!("cannot read: {e}"),
        })?;
        Scenario::from_toml(&text, &file, overrides)
    }

    /// Checks that serde's types cannot express.
    fn validate(&self) -> Result<(), (String, String)> {
        let check_link = |path: &str, l: &LinkSpec| -> Result<(), (String, String)> {
            if l.delay.is_some() && l.rtt.is_some() {
                return Err((format!("{path}.delay"), "give either `delay` (one way) or `rtt`, not both".into()));
            }
            if !(0.0..=1.0).contains(&l.loss) {
                return Err((format!("{path}.loss"), format!("{} is not a probability in [0, 1]", l.loss)));
            }
            if l.buffer.0.bytes(1500) == 0 {
                return Err((format!("{path}.buffer"), "must be larger than zero".into()));
            }
            Ok(())
        };
        match &self.topology {
            TopologySpec::Dumbbell { pairs, access, bottleneck, receivers } => {
                if *pairs == 0 {
                    return Err(("topology.pairs".into(), "must be at least 1".into()));
                }
                check_link("topology.access", access)?;
                check_link("topology.bottleneck", bottleneck)?;
                check_link("topology.receivers", receivers)?;
            }
            TopologySpec::Chain { hops, link, access, .. } => {
                if *hops == 0 {
                    return Err(("topology.hops".into(), "must be at least 1".into()));
                }
                check_link("topology.link", link)?;
                check_link("topology.access", access)?;
            }
            TopologySpec::MultiRtt { pairs, bottleneck, .. } => {
                if *pairs == 0 {
                    return Err(("topology.pairs".into(), "must be at least 1".into()));
                }
                check_link("topology.bottleneck", bottleneck)?;
            }
            TopologySpec::Graph { links, .. } => {
                for (i, l) in links.iter().enumerate() {
                    check_link(&format!("topology.links[{i}]"), &l.spec)?;
                }
            }
        }
        if let Some(n) = &self.ngwa {
            n.validate()?;
        }
        if self.tcp.segment_size < 64 || self.tcp.segment_size > 65_000 {
            return Err(("tcp.segment_size".into(), format!("{} is outside 64..=65000 bytes", self.tcp.segment_size)));
        }
        for (i, t) in self.traffic.iter().enumerate() {
            if let TrafficSpec::UdpCbr { packet, .. }
            | TrafficSpec::UdpOnOff { packet, .. }
            | TrafficSpec::TcpRate { packet, .. } = t
            {
                if *packet == 0 || *packet > 65_000 {
                    return Err((format!("traffic[{i}].packet"), "must be between 1 and 65000 bytes".into()));
                }
            }
        }
        self.validate_run()?;
        self.validate_tcp()?;
        for (i, t) in self.traffic.iter().enumerate() {
            self.validate_traffic(&format!("traffic[{i}]"), t)?;
        }
        Ok(())
    }
    /// `[run]`: a run that ends before it starts, or a sampler that would
    /// not advance the clock, is refused rather than run as something else.
    fn validate_run(&self) -> Result<(), (String, String)> {
        let r = &self.run;
        if r.stop.0 == netreturn_base::Time::ZERO {
            return Err(("run.stop".into(), "must be longer than 0 s (a run of no time measures nothing)".into()));
        }
        if r.sample_interval.0 == netreturn_base::Time::ZERO {
            return Err((
                "run.sample_interval".into(),
                "must be longer than 0 s: a sampler at the same instant forever never lets the clock advance".into(),
            ));
        }
        if r.seeds == 0 {
            return Err(("run.seeds".into(), "must be at least 1, got 0".into()));
        }
        if let Some(w) = r.warmup {
            if w.0 >= r.stop.0 {
                return Err((
                    "run.warmup".into(),
                    format!("{:.3} s is not shorter than the run ({:.3} s)", w.0.secs_f64(), r.stop.0.secs_f64()),
                ));
            }
        }
        Ok(())
    }

    /// `[tcp]`: values with which no connection could send.
    fn validate_tcp(&self) -> Result<(), (String, String)> {
        let t = &self.tcp;
        for (field, v) in [("tcp.initial_cwnd", t.initial_cwnd), ("tcp.delayed_ack_count", t.delayed_ack_count)] {
            if v == 0 {
                return Err((field.into(), "must be at least 1 (segments)".into()));
            }
        }
        if t.ts_tick.0 == netreturn_base::Time::ZERO {
            return Err(("tcp.ts_tick".into(), "must be longer than 0 s (RFC 7323 section 5.4: 1 ms to 1 s)".into()));
        }
        for (field, b) in [("tcp.rcv_buf", t.rcv_buf), ("tcp.snd_buf", t.snd_buf)] {
            let bytes = b.0.bytes(packet_bytes(t.segment_size));
            if bytes < t.segment_size as u64 {
                return Err((
                    field.into(),
                    format!("{bytes} B cannot hold one segment ({} B): every flow would stall", t.segment_size),
                ));
            }
        }
        Ok(())
    }

    /// One traffic entry: counts, start bounds, and sources that must
    /// advance the clock between packets.
    fn validate_traffic(&self, at: &str, t: &TrafficSpec) -> Result<(), (String, String)> {
        let (count, start) = match t {
            TrafficSpec::TcpFile { count, start, .. }
            | TrafficSpec::TcpBulk { count, start, .. }
            | TrafficSpec::TcpRate { count, start, .. }
            | TrafficSpec::UdpCbr { count, start, .. }
            | TrafficSpec::UdpOnOff { count, start, .. } => (Some(*count), Some(start)),
            TrafficSpec::TcpWeb { .. } => (None, None),
        };
        if count == Some(0) {
            return Err((format!("{at}.count"), "must be at least 1 (remove the entry for no traffic)".into()));
        }
        if let Some(Dist::Uniform { uniform: [a, b] }) = start {
            if a.0 > b.0 {
                return Err((format!("{at}.start.uniform"), "the bounds are reversed: [low, high]".into()));
            }
        }
        // A packet source sends one packet every `packet * 8 / rate`; below
        // one nanosecond the clock would never move.
        let paced = |packet: u32, rate: netreturn_base::Rate, field: &str| -> Result<(), (String, String)> {
            if rate.0 > 0 && rate.tx_time(packet as u64) == netreturn_base::Time::ZERO {
                return Err((
                    format!("{at}.{field}"),
                    format!(
                        "{} bit/s sends a {packet}-byte packet every {:.3} ns, below the clock's 1 ns; at most {} bit/s",
                        rate.0,
                        packet as f64 * 8e9 / rate.0 as f64,
                        packet as u64 * 8_000_000_000
                    ),
                ));
            }
            Ok(())
        };
        match t {
            TrafficSpec::UdpCbr { rate, packet, schedule, .. } => {
                paced(*packet, rate.0, "rate")?;
                for (k, (_, r)) in schedule.iter().enumerate() {
                    paced(*packet, r.0, &format!("schedule[{k}]"))?;
                }
            }
            TrafficSpec::UdpOnOff { rate, packet, on, .. } => {
                paced(*packet, rate.0, "rate")?;
                if on.0 == netreturn_base::Time::ZERO {
                    return Err((
                        format!("{at}.on"),
                        "must be longer than 0 s: a source never on sends nothing and never lets the clock advance"
                            .into(),
                    ));
                }
            }
            TrafficSpec::TcpRate { rate, packet, .. } => paced(*packet, rate.0, "rate")?,
            TrafficSpec::TcpWeb { rate, shape, mean_size, .. } => {
                if !(rate.is_finite() && *rate > 0.0) {
                    return Err((
                        format!("{at}.rate"),
                        format!("{rate} is not a positive, finite number of flows per second"),
                    ));
                }
                if !(shape.is_finite() && *shape > 1.0) {
                    return Err((
                        format!("{at}.shape"),
                        format!("{shape}: a Pareto shape must be above 1 for a finite mean size"),
                    ));
                }
                if mean_size.0.bytes(1) == 0 {
                    return Err((format!("{at}.mean_size"), "must be larger than zero".into()));
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Whether `field` is `at` or lies inside it (`at.key`, `at[i]`): a field
/// inside a substituted table counts as the table's.
fn within(field: &str, at: &str) -> bool {
    field.strip_prefix(at).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

/// `[params]` names the bundled scenarios used before one name per word:
/// the bottleneck's rate was `rate`, `bottleneck` and `wireless_rate`.
const RENAMED_PARAMS: &[(&str, &str)] =
    &[("rate", "bottleneck_rate"), ("bottleneck", "bottleneck_rate"), ("wireless_rate", "bottleneck_rate")];

/// Keys of `[tcp]` that moved into a congestion control's table.
const MOVED_TCP_KEYS: &[(&str, &str)] = &[
    ("hystart", "cubic = { hystart = ... }"),
    ("fast_convergence", "cubic = { fast_convergence = ... }"),
    ("tcp_friendliness", "cubic = { tcp_friendliness = ... }"),
    ("sarbe_restore_cwnd", "sarbe = { restore_cwnd = ... }"),
    ("xcp_ignore_handshake_rtt", "xcp = { ignore_handshake_rtt = ... }"),
];

/// Takes the congestion controls' tables (`cubic`, `sarbe`, ... : every
/// name of `netreturn_tcp::CcName::ALL`) out of the document's `[tcp]` and
/// reads them; errors as (field, message).
/// `tcp.profile`: a named set of defaults for the end hosts, written into
/// `[tcp]` wherever the file left a key out (the file's own keys win), so
/// the resolved scenario shows every value. `"ns3"` is the simulator's own
/// defaults (ns-3 3.44's, SPEC.md section 6); `"linux"` moves the ones
/// Linux 6.x sets otherwise, for comparisons with real Linux senders
/// (`netreturn testbed compare`, docs/testbed.md):
pub const TCP_PROFILES: &[(&str, &[(&str, &str)])] = &[
    ("ns3", &[]),
    (
        "linux",
        &[
            // TCP_RTO_MIN (include/net/tcp.h), where ns-3 uses 1 s (RFC 6298 2.4).
            ("min_rto", "200ms"),
            // TCP_DELACK_MIN: Linux's delayed-ACK timer starts at 40 ms and
            // adapts; ns-3's is 200 ms.
            ("delayed_ack_timeout", "40ms"),
            // Without SACK Linux restarts the timer on every partial ACK
            // (RFC 6582 3.2 step 5's "Slow-but-Steady").
            ("newreno_impatient", "false"),
            // tcp_reno_ssthresh halves cwnd, not the flight; tcp_enter_loss:
            // a timeout inside a recovery keeps the ssthresh that recovery
            // set ("Reduce ssthresh if it has not yet been made inside this
            // window").
            ("loss_ssthresh", "linux"),
            // tcp_reno_cong_avoid counts the segments an ACK covers, in
            // slow start and in congestion avoidance (ns-3 counts ACKs).
            ("reno.growth", "linux"),
            ("newreno.growth", "linux"),
            // tcp_cubic.c's HyStart: the ACK train at half of delay_min,
            // the delay test at delay_min / 8 clamped to 4-16 ms; and delay
            // samples ignored for a second (HZ) after an epoch starts.
            ("cubic.hystart_rule", "linux"),
            ("cubic.cubic_delta", "1s"),
            // bictcp_update's TCP-friendly estimate keeps its slope
            // (beta_scale) past the previous maximum, where RFC 9438 4.3
            // switches alpha to 1.
            ("cubic.reno_alpha", "linux"),
            // bictcp_recalc_ssthresh: max(cwnd * beta / BICTCP_BETA_SCALE,
            // 2) on a cwnd counted in segments: ssthresh in whole segments.
            ("cubic.whole_segment_ssthresh", "true"),
            // bictcp_update: the target and cnt = cwnd / (target - cwnd) in
            // whole segments (at least 2), the TCP-friendly estimate one
            // segment per cwnd x 15 / 8 acknowledged (branch ared15).
            ("cubic.whole_segment_target", "true"),
            // tcp_cwnd_reduction (PRR as RFC 9937): below ssthresh one
            // segment per ACK, an extra MSS only on an ACK that advances
            // SND.UNA with nothing newly lost; RFC 6937's SSRB sends two.
            ("prr_bound", "safeack"),
            // dctcp_cong_avoid is tcp_reno_cong_avoid: growth counts the
            // segments an ACK covers.
            ("dctcp.growth", "linux"),
            // tcp_retransmit_skb resends skbs of the retransmission queue,
            // which hold only data sent before: no new bytes in a resend.
            ("resend_ends_at_snd_max", "true"),
            // RACK (tcp_rack_detect_loss, reo_wnd 0 in recovery without
            // reordering seen): a retransmission is lost once data sent
            // after it is SACKed, and tcp_xmit_retransmit_queue resends it
            // without waiting for the timer (branch linux12).
            ("resend_lost_retransmit", "true"),
            // tcp_may_update_window: an ACK that neither advances SND.UNA
            // nor carries newer data only opens the window (or closes it to
            // zero); a gateway's smaller window on a duplicate ACK is not
            // taken (session 24).
            ("window_update_grows_only", "true"),
        ],
    ),
];

fn expand_tcp_profile(root: &mut toml::Value) -> Result<(), (String, String)> {
    let Some(toml::Value::Table(tcp)) = root.get_mut("tcp") else { return Ok(()) };
    let Some(v) = tcp.remove("profile") else { return Ok(()) };
    let names: Vec<&str> = TCP_PROFILES.iter().map(|(n, _)| *n).collect();
    let name =
        v.as_str().ok_or_else(|| ("tcp.profile".to_string(), format!("{v} is not one of {}", names.join(", "))))?;
    let Some((_, keys)) = TCP_PROFILES.iter().find(|(n, _)| *n == name) else {
        return Err(("tcp.profile".into(), format!("{name:?} is not one of {}", names.join(", "))));
    };
    for (k, val) in keys.iter() {
        let v = match *val {
            "true" | "false" => toml::Value::Boolean(*val == "true"),
            _ => toml::Value::String(val.to_string()),
        };
        // `cubic.hystart_rule`: a key of a congestion control's table,
        // made if the file has none; its own keys win there too.
        let (table, key) = match k.split_once('.') {
            Some((t, key)) => {
                let sub = tcp.entry(t.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                let Some(sub) = sub.as_table_mut() else {
                    return Err((format!("tcp.{t}"), format!("{sub} is not a table (tcp.{t} = {{ ... }})")));
                };
                (sub, key)
            }
            None => (&mut *tcp, *k),
        };
        if !table.contains_key(key) {
            table.insert(key.to_string(), v);
        }
    }
    Ok(())
}

fn take_cc_tables(root: &mut toml::Value) -> Result<netreturn_tcp::CcParams, (String, String)> {
    let Some(toml::Value::Table(tcp)) = root.get_mut("tcp") else { return Ok(Default::default()) };
    for (old, new) in MOVED_TCP_KEYS {
        if tcp.contains_key(*old) {
            return Err((
                format!("tcp.{old}"),
                format!("moved into the congestion control's table: write `[tcp] {new}`"),
            ));
        }
    }
    let mut tables = toml::Table::new();
    for (_, name, _) in netreturn_tcp::CcName::ALL {
        if let Some(v) = tcp.remove(*name) {
            tables.insert(name.to_string(), v);
        }
    }
    serde_path_to_error::deserialize(toml::Value::Table(tables)).map_err(|e| {
        let path = e.path().to_string();
        (format!("tcp.{path}"), e.into_inner().to_string())
    })
}

fn span_hint(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(r) => {
            let line = text[..r.start.min(text.len())].matches('\n').count() + 1;
            format!(" (line {line})")
        }
        None => String::new(),
    }
}

/// A small dumbbell with `flows` and `queue` parameters: four 5 MB
/// transfers through 45 Mb/s (the examples and tests of every crate that
/// reads scenarios start from it).
pub const MINI: &str = r#"
    name = "mini"
    [params]
    flows = 4
    queue = "droptail"
    [topology]
    kind = "dumbbell"
    pairs = "{flows}"
    access = { rate = "100Mbps", rtt = "2ms" }
    bottleneck = { rate = "45Mbps", rtt = "80ms", queue = "{queue}", buffer = "97kB" }
    receivers = { rate = "100Mbps", rtt = "2ms" }
    [[traffic]]
    kind = "tcp-file"
    from = "left"
    to = "right"
    count = "{flows}"
    bytes = "5MB"
    start = { uniform = ["1s", "8s"] }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn with(sets: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
        let o: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Scenario::from_toml(MINI, "mini.toml", &o)
    }

    #[test]
    fn any_field_can_be_set_by_its_path_not_only_declared_parameters() {
        // Issue 26: --set reached only the names of [params].
        let s = with(&[("topology.bottleneck.rate", "10Mbps"), ("traffic[0].bytes", "1MB")]).unwrap();
        let TopologySpec::Dumbbell { bottleneck, .. } = &s.topology else { panic!() };
        assert_eq!(bottleneck.rate.0, netreturn_base::Rate::mbps(10));
        let TrafficSpec::TcpFile { bytes, .. } = &s.traffic[0] else { panic!() };
        assert_eq!(bytes.0, Size::Bytes(1_000_000));
        // A path wins over the parameter the field held, and the parameter
        // still reaches its other fields.
        let s = with(&[("topology.pairs", "2"), ("flows", "6")]).unwrap();
        let TopologySpec::Dumbbell { pairs, .. } = &s.topology else { panic!() };
        assert_eq!(*pairs, 2);
        let TrafficSpec::TcpFile { count, .. } = &s.traffic[0] else { panic!() };
        assert_eq!(*count, 6);
    }

    #[test]
    fn a_path_that_does_not_exist_says_what_is_there() {
        let e = with(&[("topology.bottlenek.rate", "10Mbps")]).unwrap_err();
        assert_eq!(e.field, "topology.bottlenek.rate");
        assert!(e.message.contains("no `bottlenek` in topology") && e.message.contains("bottleneck"), "{e}");
        let e = with(&[("traffic[3].count", "2")]).unwrap_err();
        assert!(e.message.contains("traffic[3] does not exist; there are 1"), "{e}");
        // A new key in an existing table reaches serde, which names the
        // fields it knows.
        let e = with(&[("run.stopp", "\"5s\"")]).unwrap_err();
        assert!(e.message.contains("stopp"), "{e}");
    }

    #[test]
    fn a_value_set_by_path_is_checked_and_the_error_names_the_users_setting() {
        let e = with(&[("topology.bottleneck.rtt", "20")]).unwrap_err();
        assert_eq!(e.field, "topology.bottleneck.rtt");
        assert!(e.message.contains("20 has no unit; write \"20ms\" or \"20s\""), "{e}");
        assert!(e.message.contains("(from --set topology.bottleneck.rtt=20)"), "{e}");
    }

    #[test]
    fn parameters_are_substituted_with_their_types_and_overridable() {
        let s =
            Scenario::from_toml(MINI, "mini.toml", &[("flows".into(), "31".into()), ("queue".into(), "red".into())])
                .unwrap();
        match &s.topology {
            TopologySpec::Dumbbell { pairs, bottleneck, .. } => {
                assert_eq!(*pairs, 31);
                assert_eq!(bottleneck.queue, QueueMethod::Queue(netreturn_control::QueueKind::Red));
            }
            _ => panic!("not a dumbbell"),
        }
    }

    #[test]
    fn a_bad_value_names_file_field_and_allowed_values() {
        let e = Scenario::from_toml(MINI, "mini.toml", &[("queue".into(), "fifo".into())]).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("mini.toml: field `topology.bottleneck.queue`"), "{msg}");
        assert!(msg.contains("droptail") && msg.contains("ared"), "{msg}");
    }

    #[test]
    fn a_bad_value_from_a_set_parameter_names_the_parameter_as_the_user_set_it() {
        // Issue 11: `--set flows=-3` used to name only `topology.pairs`.
        let e = Scenario::from_toml(MINI, "mini.toml", &[("flows".into(), "-3".into())]).unwrap_err();
        assert_eq!(e.field, "topology.pairs");
        assert!(e.message.ends_with("(from --set flows=-3)"), "{}", e.message);
        // A default taken from [params] is named as such.
        let text = MINI.replace("flows = 4", "flows = -4");
        let e = Scenario::from_toml(&text, "mini.toml", &[]).unwrap_err();
        assert!(e.message.ends_with("(from params.flows = -4)"), "{}", e.message);
        let e = Scenario::from_toml(MINI, "mini.toml", &[("queue".into(), "fifo".into())]).unwrap_err();
        assert!(e.message.ends_with("(from --set queue=fifo)"), "{}", e.message);
    }

    #[test]
    fn an_unknown_override_lists_the_parameters() {
        let e = Scenario::from_toml(MINI, "mini.toml", &[("flow".into(), "3".into())]).unwrap_err();
        assert_eq!(e.field, "params.flow");
        assert!(e.message.contains("flows, queue"), "{}", e.message);
    }

    #[test]
    fn an_old_name_of_the_bottleneck_rate_is_refused_with_the_new_one() {
        let text = MINI.replace("flows = 4", "flows = 4\nbottleneck_rate = \"45Mbps\"");
        let e = Scenario::from_toml(&text, "mini.toml", &[("rate".into(), "10Mbps".into())]).unwrap_err();
        assert_eq!(e.field, "params.rate");
        assert!(e.message.contains("--set bottleneck_rate=10Mbps"), "{e}");
    }

    #[test]
    fn an_override_of_the_wrong_type_is_refused() {
        let e = Scenario::from_toml(MINI, "mini.toml", &[("flows".into(), "many".into())]).unwrap_err();
        assert!(e.message.contains("expected integer"), "{}", e.message);
    }

    #[test]
    fn unknown_fields_are_refused() {
        let text = MINI.replace("bytes = \"5MB\"", "bytes = \"5MB\"\nbites = 3");
        let e = Scenario::from_toml(&text, "x.toml", &[]).unwrap_err();
        assert!(e.message.contains("bites"), "{e}");
    }

    #[test]
    fn a_bad_unit_is_reported_at_its_field() {
        let text = MINI.replace("\"45Mbps\"", "\"45 parsecs\"");
        let e = Scenario::from_toml(&text, "x.toml", &[]).unwrap_err();
        assert_eq!(e.field, "topology.bottleneck.rate");
    }

    #[test]
    fn syntax_errors_give_the_line() {
        let e = Scenario::from_toml("name = \"x\"\n[topology\n", "x.toml", &[]).unwrap_err();
        assert!(e.message.contains("line 2"), "{e}");
    }

    fn with_gateway(table: &str) -> Result<Scenario, ScenarioError> {
        let text = MINI.replace("buffer = \"97kB\" }", &format!("buffer = \"97kB\", gateway = {table} }}"));
        Scenario::from_toml(&text, "g.toml", &[("queue".into(), "ewt".into())])
    }

    #[test]
    fn an_unknown_controller_key_names_its_field_and_the_allowed_keys() {
        let e = with_gateway("{ ewa = { wup = 3.0 } }").unwrap_err();
        assert_eq!(e.field, "topology.bottleneck.gateway.ewa.wup", "{e}");
        assert!(e.message.contains("wup") && e.message.contains("w_up"), "{e}");
        let e = with_gateway("{ saplaw = {} }").unwrap_err();
        assert!(e.message.contains("sap-law") && e.message.contains("assume_wscale"), "{e}");
    }

    #[test]
    fn a_negative_or_garbage_controller_size_is_an_error_not_zero() {
        for bad in ["\"-5k\"", "\"29q\"", "-3"] {
            let e = with_gateway(&format!("{{ ewt = {{ st = {bad} }} }}")).unwrap_err();
            assert_eq!(e.field, "topology.bottleneck.gateway.ewt.st", "{bad}: {e}");
        }
    }

    #[test]
    fn controller_sizes_in_packets_count_the_mtu() {
        let s = with_gateway("{ ewt = { st = \"20p\" }, assume_wscale = 7 }").unwrap();
        let TopologySpec::Dumbbell { bottleneck, .. } = &s.topology else { panic!() };
        let g = bottleneck.gateway.as_ref().unwrap();
        assert_eq!(g.ewt.as_ref().unwrap().start_threshold, Some(Size::Packets(20)));
        let cfg = netreturn_control::GatewayConfig::from_params(
            g,
            netreturn_control::ControllerKind::Ewt,
            97_000,
            netreturn_base::Rate::mbps(45),
            1458,
        );
        let ctl = netreturn_control::Controller::new(
            &cfg.controller,
            netreturn_control::Bottleneck {
                buffer_bytes: 97_000,
                link_rate: cfg.link_rate,
                default_mss: cfg.default_mss,
                packet_bytes: cfg.packet_bytes,
            },
        );
        let netreturn_control::Controller::Ewt(ewt) = ctl else { panic!() };
        assert_eq!(ewt.start_threshold(), 20 * 1498);
        assert_eq!(cfg.assume_wscale, Some(7));
    }

    #[test]
    fn the_timer_restart_at_a_fast_retransmit_is_off_unless_the_file_turns_it_on() {
        // Off: RFC 6298 (5.1), ns-3; on: ns-2.35 tcp-newreno.cc dupack_action.
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert!(!s.tcp.rto_restart_on_fast_retransmit);
        let text = MINI.replace("[topology]", "[tcp]\nrto_restart_on_fast_retransmit = true\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert!(s.tcp.rto_restart_on_fast_retransmit);
    }

    #[test]
    fn limited_transmit_is_on_for_new_data_unless_the_file_turns_it_off_or_extends_it_to_resends() {
        // RFC 3042, on by default (ours, ns-2.35's singledup_ 1, ns-3, Linux).
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert!(s.tcp.limited_transmit);
        let text = MINI.replace("[topology]", "[tcp]\nlimited_transmit = false\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert!(!s.tcp.limited_transmit);
        assert!(!s.tcp.limited_transmit_resends, "RFC 3042: new data only");
        let text = MINI.replace("[topology]", "[tcp]\nlimited_transmit_resends = true\n[topology]");
        assert!(Scenario::from_toml(&text, "p.toml", &[]).unwrap().tcp.limited_transmit_resends);
        let text = MINI.replace("[topology]", "[tcp]\nlimited_transmit = 2\n[topology]");
        let e = Scenario::from_toml(&text, "p.toml", &[]).unwrap_err();
        assert!(e.to_string().contains("limited_transmit"), "{e}");
    }

    #[test]
    fn the_receiver_offers_its_whole_buffer_at_once_unless_the_file_opens_it_as_linux() {
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert!(!crate::resolve::tcp_config(&s).rcv_window_opens);
        let text = MINI.replace("[topology]", "[tcp]\nrcv_window_opens = true\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert!(crate::resolve::tcp_config(&s).rcv_window_opens);
    }

    #[test]
    fn the_window_deducts_out_of_order_bytes_unless_the_file_says_not() {
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert!(s.tcp.window_deducts_ooo);
        assert!(crate::resolve::tcp_config(&s).window_deducts_ooo);
        let text = MINI.replace("[topology]", "[tcp]\nwindow_deducts_ooo = false\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert!(!crate::resolve::tcp_config(&s).window_deducts_ooo);
    }

    #[test]
    fn a_resend_merges_sent_segments_only_when_the_file_asks_for_it() {
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert!(!crate::resolve::tcp_config(&s).resend_merges_sent);
        let text = MINI.replace("[topology]", "[tcp]\nresend_merges_sent = true\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert!(crate::resolve::tcp_config(&s).resend_merges_sent);
    }

    #[test]
    fn a_resend_ends_at_snd_max_only_when_the_file_asks_for_it() {
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert!(!s.tcp.resend_ends_at_snd_max);
        let text = MINI.replace("[topology]", "[tcp]\nresend_ends_at_snd_max = true\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert!(s.tcp.resend_ends_at_snd_max);
        assert!(crate::resolve::tcp_config(&s).resend_ends_at_snd_max);
    }

    #[test]
    fn the_loss_ssthresh_rule_reads_rfc5681_ns3_linux_or_ns2_and_refuses_others_naming_the_field() {
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert_eq!(s.tcp.loss_ssthresh, LossSsthreshName::Rfc5681);
        for (name, rule) in
            [("ns3", LossSsthreshName::Ns3), ("linux", LossSsthreshName::Linux), ("ns2", LossSsthreshName::Ns2)]
        {
            let text = MINI.replace("[topology]", &format!("[tcp]\nloss_ssthresh = \"{name}\"\n[topology]"));
            assert_eq!(Scenario::from_toml(&text, "p.toml", &[]).unwrap().tcp.loss_ssthresh, rule);
        }
        let text = MINI.replace("[topology]", "[tcp]\nloss_ssthresh = \"half\"\n[topology]");
        let e = Scenario::from_toml(&text, "p.toml", &[]).unwrap_err();
        assert!(e.to_string().contains("loss_ssthresh") && e.to_string().contains("linux"), "{e}");
    }

    #[test]
    fn the_prr_bound_is_ssrb_unless_the_file_names_safeack_and_refuses_others() {
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert_eq!(crate::resolve::tcp_config(&s).prr_bound, netreturn_tcp::PrrBound::Ssrb);
        let text = MINI.replace("[topology]", "[tcp]\nprr_bound = \"safeack\"\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert_eq!(crate::resolve::tcp_config(&s).prr_bound, netreturn_tcp::PrrBound::SafeAck);
        let text = MINI.replace("[topology]", "[tcp]\nprr_bound = \"crb\"\n[topology]");
        let e = Scenario::from_toml(&text, "p.toml", &[]).unwrap_err();
        assert!(e.to_string().contains("prr_bound") && e.to_string().contains("safeack"), "{e}");
    }

    #[test]
    fn the_recovery_from_cwr_rule_is_linux_unless_the_file_names_ns3_and_refuses_others() {
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert_eq!(s.tcp.recovery_from_cwr, RecoveryFromCwrName::Linux);
        assert_eq!(crate::resolve::tcp_config(&s).recovery_from_cwr, netreturn_tcp::RecoveryFromCwr::Linux);
        let text = MINI.replace("[topology]", "[tcp]\nrecovery_from_cwr = \"ns3\"\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert_eq!(crate::resolve::tcp_config(&s).recovery_from_cwr, netreturn_tcp::RecoveryFromCwr::Ns3);
        let text = MINI.replace("[topology]", "[tcp]\nrecovery_from_cwr = \"rfc3168\"\n[topology]");
        let e = Scenario::from_toml(&text, "p.toml", &[]).unwrap_err();
        assert!(e.to_string().contains("recovery_from_cwr") && e.to_string().contains("ns3"), "{e}");
    }

    #[test]
    fn the_linux_profile_fills_the_keys_a_file_left_out_and_the_files_own_keys_win() {
        use netreturn_base::Time;
        let text = MINI.replace("[topology]", "[tcp]\nprofile = \"linux\"\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert_eq!(s.tcp.min_rto.0, Time::from_millis(200));
        assert_eq!(s.tcp.delayed_ack_timeout.0, Time::from_millis(40));
        assert!(!s.tcp.newreno_impatient);
        assert!(s.tcp.resend_ends_at_snd_max);
        assert!(crate::resolve::tcp_config(&s).resend_lost_retransmit, "RACK resends a lost retransmission");
        assert!(!crate::resolve::tcp_config(&Scenario::from_toml(MINI, "p.toml", &[]).unwrap()).resend_lost_retransmit);
        assert_eq!(crate::resolve::tcp_config(&s).prr_bound, netreturn_tcp::PrrBound::SafeAck);
        let own = MINI.replace("[topology]", "[tcp]\nprofile = \"linux\"\nmin_rto = \"300ms\"\n[topology]");
        assert_eq!(Scenario::from_toml(&own, "p.toml", &[]).unwrap().tcp.min_rto.0, Time::from_millis(300));
        // ns3 is the defaults themselves.
        let ns3 = MINI.replace("[topology]", "[tcp]\nprofile = \"ns3\"\n[topology]");
        let d = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        let n = Scenario::from_toml(&ns3, "p.toml", &[]).unwrap();
        assert_eq!((n.tcp.min_rto.0, n.tcp.delayed_ack_timeout.0), (d.tcp.min_rto.0, d.tcp.delayed_ack_timeout.0));
        assert_eq!(n.tcp.cc_params, d.tcp.cc_params);
    }

    #[test]
    fn the_linux_profile_sets_keys_inside_the_congestion_controls_tables_without_overriding_the_files() {
        use netreturn_tcp::cc::cubic::HystartRule;
        use netreturn_tcp::cc::reno::Growth;
        let text = MINI.replace("[topology]", "[tcp]\nprofile = \"linux\"\n[topology]");
        let p = Scenario::from_toml(&text, "p.toml", &[]).unwrap().tcp.cc_params;
        assert_eq!(p.newreno.unwrap().growth, Growth::Linux);
        let cubic = p.cubic.unwrap();
        assert_eq!((cubic.hystart_rule, cubic.cubic_delta), (HystartRule::Linux, netreturn_base::Time::from_secs(1)));
        assert_eq!(cubic.reno_alpha, netreturn_tcp::cc::cubic::RenoAlpha::Linux);
        assert!(cubic.whole_segment_ssthresh, "bictcp_recalc_ssthresh works in segments");
        assert!(cubic.whole_segment_target, "bictcp_update works in segments");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert!(crate::resolve::tcp_config(&s).window_update_grows_only, "tcp_may_update_window");
        assert!(
            !crate::resolve::tcp_config(&Scenario::from_toml(MINI, "m.toml", &[]).unwrap()).window_update_grows_only
        );
        assert_eq!(p.dctcp.unwrap().growth, Growth::Linux);
        // A table the file writes keeps its keys and gains the profile's others.
        let own = MINI.replace(
            "[topology]",
            "[tcp]\nprofile = \"linux\"\ncubic = { hystart_rule = \"ns3\", hystart = false }\n[topology]",
        );
        let c = Scenario::from_toml(&own, "p.toml", &[]).unwrap().tcp.cc_params.cubic.unwrap();
        assert_eq!(
            (c.hystart_rule, c.hystart, c.cubic_delta),
            (HystartRule::Ns3, false, netreturn_base::Time::from_secs(1))
        );
    }

    #[test]
    fn cubics_reno_alpha_is_rfc_9438s_unless_the_cubic_table_names_linux() {
        use netreturn_tcp::cc::cubic::RenoAlpha;
        let text = MINI.replace("[topology]", "[tcp]\ncubic = { hystart = true }\n[topology]");
        let c = Scenario::from_toml(&text, "p.toml", &[]).unwrap().tcp.cc_params.cubic.unwrap();
        assert_eq!(c.reno_alpha, RenoAlpha::Rfc9438);
        let text = MINI.replace("[topology]", "[tcp]\ncubic = { reno_alpha = \"linux\" }\n[topology]");
        let c = Scenario::from_toml(&text, "p.toml", &[]).unwrap().tcp.cc_params.cubic.unwrap();
        assert_eq!(c.reno_alpha, RenoAlpha::Linux);
        let text = MINI.replace("[topology]", "[tcp]\ncubic = { reno_alpha = \"reno\" }\n[topology]");
        assert!(Scenario::from_toml(&text, "p.toml", &[]).is_err());
    }

    #[test]
    fn ns3s_whole_segment_ssthresh_and_echo_past_cwr_are_off_unless_the_file_turns_them_on() {
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert!(!s.tcp.ecn_echo_past_cwr, "RFC 3168: a CWR ends the echo");
        let cfg = crate::resolve::tcp_config(&s);
        assert!(!cfg.ecn_echo_past_cwr);
        let text = MINI.replace(
            "[topology]",
            "[tcp]\necn_echo_past_cwr = true\ncubic = { whole_segment_ssthresh = true }\n[topology]",
        );
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert!(s.tcp.ecn_echo_past_cwr);
        assert!(crate::resolve::tcp_config(&s).ecn_echo_past_cwr);
        assert!(s.tcp.cc_params.cubic.unwrap().whole_segment_ssthresh);
    }

    #[test]
    fn ns3s_ece_on_new_acks_only_is_off_unless_the_file_turns_it_on() {
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert!(!s.tcp.ece_on_new_ack_only, "RFC 3168: ECE on any ACK");
        assert!(!crate::resolve::tcp_config(&s).ece_on_new_ack_only);
        let text = MINI.replace("[topology]", "[tcp]\nece_on_new_ack_only = true\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        assert!(crate::resolve::tcp_config(&s).ece_on_new_ack_only);
    }

    #[test]
    fn dctcps_reno_growth_is_ns3s_newreno_unless_the_dctcp_table_names_linux() {
        use netreturn_tcp::cc::reno::Growth;
        let s = Scenario::from_toml(MINI, "p.toml", &[]).unwrap();
        assert!(s.tcp.cc_params.dctcp.is_none_or(|d| d.growth == Growth::Ns3));
        let text = MINI.replace("[topology]", "[tcp]\ndctcp = { growth = \"linux\" }\n[topology]");
        let d = Scenario::from_toml(&text, "p.toml", &[]).unwrap().tcp.cc_params.dctcp.unwrap();
        assert_eq!(d.growth, Growth::Linux);
    }

    #[test]
    fn an_unknown_tcp_profile_is_refused_naming_the_field_and_the_profiles() {
        let text = MINI.replace("[topology]", "[tcp]\nprofile = \"bsd\"\n[topology]");
        let e = Scenario::from_toml(&text, "p.toml", &[]).unwrap_err();
        assert_eq!(e.field, "tcp.profile");
        assert!(e.message.contains("ns3, linux") && e.to_string().contains("p.toml"), "{e}");
    }

    #[test]
    fn every_registered_congestion_control_round_trips_by_name_with_its_table() {
        // One list (netreturn_tcp's congestion_controls!): each name reads
        // back as itself, from `tcp.cc` and with an (empty) table of its own.
        for &(cc, name, _) in CcName::ALL {
            assert_eq!(CcName::from_name(name), Some(cc));
            assert_eq!(cc.name(), name);
            let text = MINI.replace("[topology]", &format!("[tcp]\ncc = \"{name}\"\n{name:?} = {{}}\n[topology]"));
            let s = Scenario::from_toml(&text, "cc.toml", &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(s.tcp.cc, cc);
            assert_eq!(s.tcp.cc_params.kind(cc).name(), cc);
        }
    }

    #[test]
    fn a_congestion_control_table_sets_its_keys_and_refuses_unknown_ones() {
        let text = MINI.replace("[topology]", "[tcp]\ncubic = { hystart = false, c = 0.5 }\n[topology]");
        let s = Scenario::from_toml(&text, "cc.toml", &[]).unwrap();
        let netreturn_tcp::CcKind::Cubic(c) = s.tcp.cc_params.kind(CcName::Cubic) else { panic!() };
        assert_eq!((c.hystart, c.c, c.fast_convergence), (false, 0.5, true));
        let text = MINI.replace("[topology]", "[tcp]\ncubic = { hystrat = false }\n[topology]");
        let e = Scenario::from_toml(&text, "cc.toml", &[]).unwrap_err();
        assert!(e.field.starts_with("tcp.cubic") && e.message.contains("hystart"), "{e}");
        // The flat keys of older files point to the table.
        let text = MINI.replace("[topology]", "[tcp]\nhystart = false\n[topology]");
        let e = Scenario::from_toml(&text, "cc.toml", &[]).unwrap_err();
        assert_eq!(e.field, "tcp.hystart");
        assert!(e.message.contains("cubic = { hystart = ... }"), "{e}");
    }

    #[test]
    fn an_out_of_range_rwm_delta_is_refused_at_its_field() {
        let e = with_gateway("{ rwm = { delta = -1.0 } }").unwrap_err();
        assert_eq!(e.field, "topology.bottleneck.gateway.rwm.delta");
        assert!(e.message.contains("[-0.99, 10]"), "{e}");
    }
}
