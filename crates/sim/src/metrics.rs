//! The assembly of a run's result (SPEC.md section 4) from a world: its
//! per-flow, per-interface and summary rows. The statistics themselves
//! (pure functions, [`DurationSummary`]) are [`crate::stats`]'s,
//! re-exported here.

use crate::world::{FlowTrace, World};
use netreturn_base::Time;

pub use crate::stats::*;

/// One TCP flow's row of the per-run table.
#[derive(Clone, Debug)]
pub struct FlowRow {
    pub flow: usize,
    pub src: String,
    pub dst: String,
    pub start_s: f64,
    /// NaN when the transfer did not finish.
    pub fct_s: f64,
    pub goodput_mbps: f64,
    pub efficiency_pct: f64,
    pub bytes_delivered: u64,
    pub bytes_sent: u64,
    pub bytes_retransmitted: u64,
    /// Packets of the data direction lost (segments, SYN and FIN included,
    /// as ns-3's FlowMonitor counts the forward flow).
    pub packets_lost: u64,
    /// Loss ratio of the data direction (seed 000 eq. 13 speaks of segments).
    pub loss_pct: f64,
    /// Packets of the ACK direction lost.
    pub acks_lost: u64,
    pub fast_retransmits: u64,
    /// DupThresh duplicate ACKs in a row, with or without fast retransmit.
    pub triple_dupacks: u64,
    /// Duplicate ACKs received with DupThresh or more in a row (the third
    /// of a run and each after it): the NGWA paper's Fig. 6 counted per
    /// dupACK rather than per run (docs/ngwa.md).
    pub dupacks_past_threshold: u64,
    pub timeouts: u64,
    /// Window reductions answering ECE (RFC 3168 section 6.1.2).
    pub ecn_reductions: u64,
    /// A short web-like transfer (`tcp-web`), not a long-lived FTP flow.
    pub web: bool,
}

#[derive(Clone, Debug)]
pub struct UdpRow {
    pub flow: usize,
    pub src: String,
    pub dst: String,
    pub sent_packets: u64,
    pub received_packets: u64,
    pub lost_packets: u64,
    pub loss_pct: f64,
    pub efficiency_pct: f64,
    pub goodput_mbps: f64,
}

#[derive(Clone, Debug)]
pub struct IfaceRow {
    pub name: String,
    pub utilization: f64,
    pub tx_packets: u64,
    pub queue_drops: u64,
    /// `queue_drops` by reason: overflow (tail), early (RED's, PIE's and
    /// DualPI2's random drops), RED forced, and at the head by sojourn
    /// (CoDel).
    pub drops_by_reason: [u64; 4],
    pub loss_drops: u64,
    pub queue_mean_bytes: f64,
    pub queue_std_bytes: f64,
    pub queue_max_bytes: u64,
    pub robustness_index: f64,
    pub acks_rewritten: u64,
    /// Packets the queue marked CE instead of dropping.
    pub ecn_marks: u64,
    /// Packets this interface's queue dropped, percent of those offered.
    pub loss_pct: f64,
}

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub seed: u64,
    /// Headline metrics, named with their units.
    pub summary: Vec<(&'static str, f64)>,
    pub flows: Vec<FlowRow>,
    pub udp: Vec<UdpRow>,
    pub ifaces: Vec<IfaceRow>,
    /// The link direction the headline metrics and `queue_series` describe
    /// ("R1->R2"; `Resolved::monitored`).
    pub monitor: Option<String>,
    /// Monitored queue occupancy: (time s, bytes).
    pub queue_series: (Vec<f64>, Vec<f64>),
    /// Available bandwidth at the monitored interface at the times of
    /// `queue_series` (Mb/s): its rate minus the cross traffic it carried,
    /// see `Recorder::avail_mbps`.
    pub avail_mbps: Vec<f64>,
    pub traces: Vec<FlowTrace>,
    pub events: u64,
    /// pcap captures requested in `run.pcap`: (interface name, file bytes).
    pub pcaps: Vec<(String, Vec<u8>)>,
}

impl RunResult {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.summary.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

pub fn collect(w: &World, seed: u64) -> RunResult {
    let end = w.now;
    let span = end.saturating_sub(w.first_start);
    let node = |i: u32| w.topo.nodes[i as usize].clone();
    let mut flows = vec![];
    for (i, f) in w.tcp.iter().enumerate() {
        let st = f.conns[0].stats();
        let delivered = f.conns[1].stats().bytes_delivered;
        let fct = f.done_at.map(|d| (d - f.start).secs_f64()).unwrap_or(f64::NAN);
        let active = match f.done_at {
            Some(d) => d.saturating_sub(f.start),
            None => f.stop.unwrap_or(end).min(end).saturating_sub(f.start),
        };
        let goodput = if active > Time::ZERO { delivered as f64 * 8.0 / active.secs_f64() / 1e6 } else { 0.0 };
        flows.push(FlowRow {
            flow: i,
            src: node(f.src),
            dst: node(f.dst),
            start_s: f.start.secs_f64(),
            fct_s: fct,
            goodput_mbps: goodput,
            efficiency_pct: efficiency_pct(st.bytes_sent, st.bytes_retransmitted),
            bytes_delivered: delivered,
            bytes_sent: st.bytes_sent,
            bytes_retransmitted: st.bytes_retransmitted,
            packets_lost: f.packets[0].lost,
            loss_pct: loss_ratio_pct(f.packets[0].received, f.packets[0].lost),
            acks_lost: f.packets[1].lost,
            fast_retransmits: st.fast_retransmits,
            ecn_reductions: st.ecn_reductions,
            triple_dupacks: st.triple_dupacks,
            dupacks_past_threshold: st.dupacks_past_threshold,
            timeouts: st.timeouts,
            web: f.web,
        });
    }
    let mut udp = vec![];
    for (i, u) in w.udp.iter().enumerate() {
        // A source that stops before the run ends is active until its stop.
        let active = u.stop.unwrap_or(end).min(end).saturating_sub(u.start);
        udp.push(UdpRow {
            flow: i,
            src: node(u.src),
            dst: node(u.dst),
            sent_packets: u.packets.sent,
            received_packets: u.packets.received,
            lost_packets: u.packets.lost,
            loss_pct: loss_ratio_pct(u.packets.received, u.packets.lost),
            // No retransmission in UDP: its efficiency is the share of sent
            // bytes that arrived (documented in docs/metrics.md).
            efficiency_pct: if u.bytes_sent == 0 {
                100.0
            } else {
                u.bytes_received as f64 / u.bytes_sent as f64 * 100.0
            },
            goodput_mbps: if active > Time::ZERO {
                u.bytes_received as f64 * 8.0 / active.secs_f64() / 1e6
            } else {
                0.0
            },
        });
    }
    let mut ifaces = vec![];
    for f in &w.ifaces {
        let t = span.nanos() as f64;
        let (qm, qs) = if t > 0.0 {
            let m = f.stats.q_int / t;
            (m, (f.stats.q2_int / t - m * m).max(0.0).sqrt())
        } else {
            (0.0, 0.0)
        };
        ifaces.push(IfaceRow {
            name: f.name.clone(),
            utilization: if t > 0.0 {
                f.stats.tx_bytes as f64 * 8.0 / (f.rate.bits_per_sec() as f64 * span.secs_f64())
            } else {
                0.0
            },
            tx_packets: f.stats.tx_packets,
            queue_drops: f.stats.queue_drops,
            drops_by_reason: [f.stats.drops_overflow, f.stats.drops_early, f.stats.drops_forced, f.stats.drops_sojourn],
            loss_drops: f.stats.loss_drops,
            queue_mean_bytes: qm,
            queue_std_bytes: qs,
            queue_max_bytes: f.stats.max_backlog,
            robustness_index: robustness_index(qm, qs, f.capacity_bytes as f64),
            acks_rewritten: f.stats.acks_rewritten,
            ecn_marks: f.stats.ecn_marks,
            loss_pct: loss_ratio_pct(f.stats.tx_packets, f.stats.queue_drops),
        });
    }

    let measured: Vec<&FlowRow> = flows.iter().filter(|r| r.start_s >= w.warmup.secs_f64()).collect();
    let goodputs: Vec<f64> = measured.iter().map(|r| r.goodput_mbps).collect();
    let fcts: Vec<f64> = measured.iter().map(|r| r.fct_s).filter(|x| !x.is_nan()).collect();
    let effs: Vec<f64> = measured.iter().map(|r| r.efficiency_pct).collect();
    let (mut trecv, mut tlost, mut drecv, mut dlost) = (0, 0, 0, 0);
    for f in &w.tcp {
        trecv += f.packets[0].received + f.packets[1].received;
        tlost += f.packets[0].lost + f.packets[1].lost;
        drecv += f.packets[0].received;
        dlost += f.packets[0].lost;
    }
    let (mut urecv, mut ulost) = (0, 0);
    for u in &w.udp {
        urecv += u.packets.received;
        ulost += u.packets.lost;
    }
    let udp_eff: Vec<f64> = udp.iter().map(|u| u.efficiency_pct).collect();
    let mon = w.rec.monitor.map(|m| &ifaces[m as usize]);
    let rtt = &w.rec.rtt;
    let rtt_q = rtt.quantiles_ms(&[0.25, 0.5, 0.75]);
    let nan = f64::NAN;
    let mut summary = vec![
        ("tcp_flows", flows.len() as f64),
        ("flows_completed", flows.iter().filter(|r| !r.fct_s.is_nan()).count() as f64),
        // Finite transfers that started and did not finish by the end of
        // the run: a stalled connection, or a stop time too early.
        (
            "flows_incomplete",
            w.tcp.iter().filter(|f| f.bytes.is_some() && f.started && f.done_at.is_none()).count() as f64,
        ),
        // Data segments only (seed 000 eq. 13; ns-3 FlowMonitor's forward flows).
        ("tcp_data_loss_pct", loss_ratio_pct(drecv, dlost)),
        // Every TCP packet, ACKs included.
        ("tcp_packet_loss_pct", loss_ratio_pct(trecv, tlost)),
        ("udp_loss_pct", if w.udp.is_empty() { nan } else { loss_ratio_pct(urecv, ulost) }),
        ("goodput_mean_mbps", mean(&goodputs)),
        ("fct_mean_s", mean(&fcts)),
        ("fct_max_s", fcts.iter().copied().fold(nan, f64::max)),
        ("jain_goodput", jain(&goodputs)),
        ("tcp_efficiency_pct", mean(&effs)),
        ("udp_efficiency_pct", if udp.is_empty() { nan } else { mean(&udp_eff) }),
        ("utilization", mon.map(|m| m.utilization).unwrap_or(nan)),
        ("robustness_index", mon.map(|m| m.robustness_index).unwrap_or(nan)),
        ("queue_mean_bytes", mon.map(|m| m.queue_mean_bytes).unwrap_or(nan)),
        ("queue_std_bytes", mon.map(|m| m.queue_std_bytes).unwrap_or(nan)),
        ("queue_max_bytes", mon.map(|m| m.queue_max_bytes as f64).unwrap_or(nan)),
        ("queue_drops", mon.map(|m| m.queue_drops as f64).unwrap_or(nan)),
        ("lost_packets", w.rec.totals.dropped as f64),
        // Entries into fast recovery (ns-3's CA_RECOVERY).
        ("fast_recoveries", flows.iter().map(|r| r.fast_retransmits).sum::<u64>() as f64),
        // Triple-duplicate-ACK events as the senders received them, counted
        // even by TCP without fast retransmit (seed 001 Fig. 6, Table 2).
        ("triple_dupacks", flows.iter().map(|r| r.triple_dupacks).sum::<u64>() as f64),
        // The same duplicate ACKs counted one by one from the third of a run
        // on (a run of n: n - 2), the other reading of Fig. 6 (docs/ngwa.md).
        ("dupacks_past_threshold", flows.iter().map(|r| r.dupacks_past_threshold).sum::<u64>() as f64),
        ("timeouts", flows.iter().map(|r| r.timeouts).sum::<u64>() as f64),
        ("acks_rewritten", mon.map(|m| m.acks_rewritten as f64).unwrap_or(nan)),
        // Congestion signalled by CE marks instead of drops (RFC 3168).
        ("ecn_marks", mon.map(|m| m.ecn_marks as f64).unwrap_or(nan)),
        ("ecn_reductions", flows.iter().map(|r| r.ecn_reductions).sum::<u64>() as f64),
        ("rtt_mean_ms", rtt.mean_ms()),
        ("rtt_std_ms", rtt.std_ms()),
        ("rtt_p25_ms", rtt_q[0]),
        ("rtt_p50_ms", rtt_q[1]),
        ("rtt_p75_ms", rtt_q[2]),
        ("rtt_max_ms", rtt.max_ms()),
        ("sim_time_s", end.secs_f64()),
        ("events", w.events_processed() as f64),
    ];
    if w.tcp.iter().any(|f| f.web) {
        summary.extend(web_and_ftp(&flows));
    }
    // Router stages' counters (NGWA, XCP), summed over the interfaces.
    for stage in w.ifaces.iter().filter_map(|f| f.stage.as_ref().map(|s| s.as_dyn())) {
        for (name, v) in stage.counters() {
            match summary.iter_mut().find(|(n, _)| *n == name) {
                Some(e) => e.1 += v as f64,
                None => summary.push((name, v as f64)),
            }
        }
    }
    RunResult {
        seed,
        summary,
        flows,
        udp,
        ifaces,
        monitor: w.rec.monitor.map(|m| w.ifaces[m as usize].name.clone()),
        queue_series: w.rec.queue_series.clone(),
        avail_mbps: w.rec.avail_mbps.clone(),
        traces: w.rec.traces.clone(),
        events: w.events_processed(),
        pcaps: w.ifaces.iter().filter_map(|f| f.pcap.as_ref().map(|p| (f.name.clone(), p.bytes().to_vec()))).collect(),
    }
}

/// Seed 002 section 3.3's split of web mice from FTP flows: the mice's
/// mean response time (their FCT, finished transfers only) and mean
/// throughput (bytes over response time), the FTP flows' mean goodput.
/// Only in runs with `tcp-web` traffic.
pub fn web_and_ftp(flows: &[FlowRow]) -> Vec<(&'static str, f64)> {
    let done: Vec<&FlowRow> = flows.iter().filter(|r| r.web && !r.fct_s.is_nan() && r.fct_s > 0.0).collect();
    let resp: Vec<f64> = done.iter().map(|r| r.fct_s).collect();
    let thr: Vec<f64> = done.iter().map(|r| r.bytes_delivered as f64 * 8.0 / r.fct_s / 1e6).collect();
    let ftp: Vec<f64> = flows.iter().filter(|r| !r.web).map(|r| r.goodput_mbps).collect();
    vec![
        ("web_flows", flows.iter().filter(|r| r.web).count() as f64),
        ("web_completed", done.len() as f64),
        ("web_response_mean_s", mean(&resp)),
        ("web_throughput_mean_mbps", mean(&thr)),
        ("ftp_throughput_mean_mbps", mean(&ftp)),
        ("jain_ftp", jain(&ftp)),
    ]
}
