//! Recording: the periodic sample (queue, traces, RTTs, the memory guard),
//! the packet log of one flow, and what the run holds.

use super::*;

/// What a run records besides its state, kept apart from the world's
/// mechanics: packet totals, the monitored queue's series, the traced
/// flows, every flow's RTT samples, the packet log of one flow, and the
/// memory guard. The caller builds it ([`Recorder::new`] reads what the
/// scenario asks for; [`Recorder::log_flow`] adds a packet log) and hands
/// it to [`World::with_recorder`]; [`crate::metrics::collect`] reads the
/// run's results from it. Per-interface and per-flow counters stay beside
/// the state they count (`Iface::stats`, `TcpFlow::packets`): a hop touches
/// one record, not two.
#[derive(Default)]
pub struct Recorder {
    pub(super) sample_interval: Time,
    /// The TCP flows `run.trace_flows` asks to trace, checked when the
    /// world is built.
    pub(crate) trace_flows: Vec<usize>,
    /// The interface whose queue is sampled: `Resolved::monitored`
    /// (`run.monitor`, else the declared bottleneck, else the traffic's
    /// slowest link).
    pub monitor: Option<u32>,
    /// Packets created, delivered to their destination node, and dropped
    /// (queues and lossy links), over the whole run.
    pub totals: PacketTotals,
    pub queue_series: (Vec<f64>, Vec<f64>),
    /// Beside `queue_series`: the monitored interface's rate minus the
    /// cross traffic it carried (every packet but those of the traced TCP
    /// flows, headers included) in the sample interval ending then, Mb/s:
    /// the bandwidth available to the traced flows (NaN at t = 0).
    pub avail_mbps: Vec<f64>,
    /// Bytes of cross traffic the monitored interface began to send since
    /// the last sample.
    pub(super) cross_bytes: u64,
    pub traces: Vec<FlowTrace>,
    /// The senders' latest RTT, every active flow every sample interval
    /// (flows started after the warm-up), summarized as it comes.
    pub rtt: crate::stats::DurationSummary,
    pub(super) active: ActiveFlows,
    /// Stop the run if its memory grows past this many bytes (checked at
    /// every sample; the limit `World::new` checked the estimate against);
    /// `over_memory` then holds what was in use.
    pub memory_limit: Option<u64>,
    pub over_memory: Option<u64>,
    /// Set when the run stopped because the clock did not move for
    /// [`super::STALL_EVENTS`] events: the event that was running.
    pub stalled: Option<String>,
    /// The clock at the last checkpoint, and how many checkpoints in a row
    /// found it there (the run loop's guard, [`super::CHECK_EVERY`]).
    pub(super) checkpoint: (Time, u32),
    /// Packet-level log of one TCP flow (debugging; off unless asked).
    pub packet_log: Option<PacketLog>,
}

/// Run-wide packet counts: every packet created is delivered, dropped, or
/// still in flight at the end (`World::in_flight`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketTotals {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
}

impl Recorder {
    /// What scenario `s` asks to record (`run.sample_interval`,
    /// `run.monitor`, `run.trace_flows`), with the memory guard's limit of
    /// this machine ([`crate::memory::limit`]).
    pub fn new(s: &crate::Scenario) -> Recorder {
        Recorder {
            sample_interval: s.run.sample_interval.0,
            trace_flows: s.run.trace_flows.clone(),
            memory_limit: crate::memory::limit(),
            ..Recorder::default()
        }
    }

    /// Also logs every packet event of TCP flow `flow` from `from` to `to`
    /// (see [`PacketLog`]).
    pub fn log_flow(mut self, flow: u32, from: Time, to: Time) -> Recorder {
        self.packet_log = Some(PacketLog { flow, from, to, lines: vec![] });
        self
    }

    /// With memory limit `limit` (bytes) instead of the machine's.
    pub fn memory_limit(mut self, limit: Option<u64>) -> Recorder {
        self.memory_limit = limit;
        self
    }
}

/// The TCP flows started and not finished (those whose RTT a sample
/// records), as a bitset over the flow table: a sample visits only them,
/// in table order, where it used to read every flow's record (a web-mice
/// run ends with tens of thousands of finished ones). Beside it, each
/// flow's latest RTT as its sender last measured it, copied after every
/// segment the sender takes in (its record is in cache then): a sample
/// reads 8 bytes a flow here, where reading each active flow's record
/// (2.3 KB, out of cache at 3100 flows) cost two misses a flow, 10 % of
/// the run's L1 misses at 100x scale.
#[derive(Default)]
pub(super) struct ActiveFlows {
    words: Vec<u64>,
    latest_rtt: Vec<u64>,
}

/// `ActiveFlows::latest_rtt` of a flow whose sender has measured no RTT yet.
const NO_RTT: u64 = u64::MAX;
/// `ActiveFlows::latest_rtt` of a flow started before the warm-up ends,
/// whose RTT the samples leave out.
const NOT_COUNTED: u64 = u64::MAX - 1;

impl ActiveFlows {
    /// Flow `flow` starts; its RTT counts if it started after the warm-up.
    #[inline(never)]
    pub(super) fn insert(&mut self, flow: usize, counted: bool) {
        let w = flow / 64;
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (flow % 64);
        if self.latest_rtt.len() <= flow {
            self.latest_rtt.resize(flow + 1, NO_RTT);
        }
        self.latest_rtt[flow] = if counted { NO_RTT } else { NOT_COUNTED };
    }

    /// The sender of flow `flow` has taken in a segment: `rtt` is its
    /// latest RTT measurement now.
    #[inline(always)]
    pub(super) fn note_rtt(&mut self, flow: usize, rtt: Option<Time>) {
        if let Some(r) = self.latest_rtt.get_mut(flow) {
            if *r != NOT_COUNTED {
                *r = rtt.map_or(NO_RTT, |t| t.0);
            }
        }
    }

    #[inline(never)]
    pub(super) fn remove(&mut self, flow: usize) {
        if let Some(w) = self.words.get_mut(flow / 64) {
            *w &= !(1 << (flow % 64));
        }
    }
}

impl FlowTrace {
    /// Values held (allocated) across its series.
    fn values(&self) -> usize {
        let series = [
            &self.time_s,
            &self.cwnd,
            &self.rwnd,
            &self.effective,
            &self.ssthresh,
            &self.rtt_ms,
            &self.delivered,
            &self.bwe_mbps,
        ];
        series.iter().map(|v| v.capacity()).sum()
    }
}

impl World {
    /// What the run's growing parts hold, bytes: packets, pending events,
    /// connections, and the recorded samples.
    pub fn memory_in_use(&self) -> u64 {
        let r = &self.rec;
        let series: usize = r.traces.iter().map(FlowTrace::values).sum::<usize>()
            + r.queue_series.0.capacity()
            + r.queue_series.1.capacity()
            + r.avail_mbps.capacity();
        (self.pool.slots.capacity() * std::mem::size_of::<Packet>()
            + self.events.len() * 32
            + self.tcp.capacity() * std::mem::size_of::<TcpFlow>()
            + series * 8
            + r.rtt.bytes()) as u64
    }

    /// Whether events of TCP flow `flow` are logged now.
    pub(super) fn logging(&self, flow: u32) -> bool {
        self.rec.packet_log.as_ref().is_some_and(|l| l.flow == flow && self.now >= l.from && self.now <= l.to)
    }

    /// A segment of flow `p.flow` as a log field: direction, then the data
    /// range or the ACK with its SACK blocks, relative to the sender's ISN.
    pub(super) fn describe_segment(&self, flow: u32, dir: u8, seg: &Segment) -> String {
        let iss = self.tcp[flow as usize].conns[0].iss();
        let rel = |x: u32| x.wrapping_sub(iss);
        // RFC 3168: a CE mark on the IP packet, CWR on data, ECE on ACKs.
        let ce = if seg.ecn == netreturn_base::Ecn::Ce { " CE" } else { "" };
        if dir == 0 {
            let rx = if seg.retransmission { " R" } else { "" };
            let cwr = if seg.flags.cwr() { " CWR" } else { "" };
            format!("data {}+{}{}{}{}", rel(seg.seq), seg.len, rx, cwr, ce)
        } else {
            let sacks: Vec<String> =
                seg.opts.sack.as_slice().iter().map(|&(l, r)| format!("{}-{}", rel(l), rel(r))).collect();
            let ece = if seg.flags.ece() { " ECE" } else { "" };
            format!("ack {} win={} sack=[{}]{}{}", rel(seg.ack), seg.window, sacks.join(","), ece, ce)
        }
    }

    pub(super) fn log(&mut self, line: String) {
        let t = self.now.secs_f64();
        if let Some(l) = self.rec.packet_log.as_mut() {
            l.lines.push(format!("{t:.6} {line}"));
        }
    }

    pub(super) fn sample(&mut self) {
        let t = self.now.secs_f64();
        if let Some(m) = self.rec.monitor {
            self.drain(m);
            self.rec.queue_series.0.push(t);
            self.rec.queue_series.1.push(self.ifaces[m as usize].backlog().bytes as f64);
            let cross = std::mem::take(&mut self.rec.cross_bytes) as f64 * 8.0 / self.rec.sample_interval.secs_f64();
            let rate = self.ifaces[m as usize].rate.0 as f64;
            self.rec.avail_mbps.push(if self.now > Time::ZERO { (rate - cross).max(0.0) / 1e6 } else { f64::NAN });
        }
        for tr in &mut self.rec.traces {
            // (A web transfer is made when it arrives.)
            let Some(f) = self.tcp.get(tr.flow) else { continue };
            if !f.started || f.done_at.is_some() {
                continue;
            }
            let p = f.conns[0].probe();
            tr.time_s.push(t);
            tr.cwnd.push(p.cwnd as f64);
            tr.rwnd.push(p.rwnd as f64);
            tr.effective.push(p.effective_window as f64);
            tr.ssthresh.push(p.ssthresh.min(1 << 40) as f64);
            tr.rtt_ms.push(p.last_rtt.map(|r| r.millis_f64()).unwrap_or(f64::NAN));
            tr.delivered.push(f.conns[1].stats().bytes_delivered as f64);
            tr.bwe_mbps.push(f.conns[0].bandwidth_estimate().map_or(f64::NAN, |b| b * 8.0 / 1e6));
        }
        // The flows started and not finished, in the order of the flow table.
        let active = &self.rec.active;
        for (k, &word) in active.words.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let r = active.latest_rtt[k * 64 + bits.trailing_zeros() as usize];
                bits &= bits - 1;
                if r < NOT_COUNTED {
                    self.rec.rtt.push(Time(r));
                }
            }
        }
        if let Some(limit) = self.rec.memory_limit {
            let used = self.memory_in_use();
            if used > limit {
                // Ends the run at the next later event (the event loop
                // checks only its stop time).
                self.rec.over_memory = Some(used);
                self.stop = self.now;
            }
        }
        self.events.schedule(self.now + self.rec.sample_interval, Event::Sample);
    }
}
