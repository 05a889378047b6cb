//! The user-space loop of the kernel datapath (module documentation of
//! [`super`]).

use std::collections::HashMap as StdMap;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use netreturn_base::{FlowKey, InBand, Rate, TcpFlags, TcpView, Time};
use netreturn_control::flows::canonical_side;
use netreturn_control::ngwa::{NgwaRouter, TcpConn};
use netreturn_control::stage::QueueState;
use netreturn_control::{KernelWindow, QueueEvent, QueueEventKind, WindowController, WindowGateway};

use super::bpf::{Load, Programs, Report};
use super::event::{Event, Side};
use super::maps::{Counter, NgwaCounter, NrKey, NrWindow};
use super::tc::{self, Bridge, Fifo, QdiscReader, QueueStats, Shaper, FIFO_HANDLE};
use crate::cli::Args;
use crate::control::stats_json;
use crate::ngwa::{NgwaWireStats, Roles};
use crate::stats::{DirStats, Stats};
use crate::sys::{install_signals, monotonic_now, write_stats_file, DUMP, STOP};
use netreturn_control::queue::Limit;

/// The set-up, in the order it is torn down (fields drop in order): the
/// programs first, then the shapers, then the bridge.
struct Datapath {
    progs: Programs,
    shaper_ab: Option<Shaper>,
    shaper_ba: Option<Shaper>,
    _bridge: Option<Bridge>,
}

/// The kernel FIFO of a link's buffer, in its own unit (`bfifo` for bytes,
/// `pfifo` for packets).
fn fifo(limit: Limit) -> Fifo {
    match limit {
        Limit::Bytes(b) => Fifo::Bytes(b),
        Limit::Packets(p) => Fifo::Packets(p as u64),
    }
}

fn set_up(args: &Args, load: Load) -> Result<Datapath, String> {
    let (a, b) = (&args.iface_a, &args.iface_b);
    tc::ifindex(a)?;
    tc::ifindex(b)?;
    let bridge = if tc::has_master(a) || tc::has_master(b) { None } else { Some(Bridge::create(a, b)?) };
    // A -> B leaves by B, B -> A by A.
    let shaper_ab = args.rate.map(|r| Shaper::create(b, r, fifo(args.queue.limit))).transpose()?;
    let shaper_ba = args.rate_ba.map(|r| Shaper::create(a, r, fifo(args.queue_ba.limit))).transpose()?;
    let progs = Programs::attach(a, b, load)?;
    Ok(Datapath { progs, shaper_ab, shaper_ba, _bridge: bridge })
}

/// NGWA on the kernel datapath (`[ngwa]` / `--ngwa`): the router's state
/// per direction stays here, the per-packet work is the programs'.
///
/// * A router's `W_node` (seed 001 eq. 3) is computed every tick from the
///   direction's kernel queue and written into `ngwa_node`; the programs
///   mark each TCP segment with it as it arrives, where the packet datapath
///   marks as it leaves the queue. With flow division the connections are
///   counted from the SYNs, FINs and RSTs the programs report (the paper's
///   own rule, section 4.1): the idle timeout does not apply, since a
///   steady connection's packets are not reported.
/// * An edge's values arrive summed per flow in `seen`; each tick the
///   flow's new values reach `NgwaEdge` as their count of values at their
///   mean, the last one as it was (without smoothing the value used is the
///   last, as per packet; with it, eq. 4 runs over the tick's mean).
struct Ngwa {
    routers: [Option<NgwaRouter>; 2],
    edge: bool,
    /// Per flow: the sum and count of values already handed on.
    read: StdMap<NrKey, (u64, u64)>,
}

impl Ngwa {
    fn new(args: &Args) -> Option<Ngwa> {
        let n = args.ngwa.as_ref()?;
        let router = || {
            n.role.router().then(|| n.router()).flatten().map(|r| {
                let mut cfg = r.config();
                // FIN / RST only: 34 years, far past any run (and inside u64 ns).
                cfg.idle_timeout = Time::from_secs(1 << 30);
                NgwaRouter::new(cfg)
            })
        };
        Some(Ngwa { routers: [router(), router()], edge: n.role.edge(), read: StdMap::new() })
    }

    fn divides(&self) -> bool {
        self.routers.iter().flatten().any(|r| r.flow_division())
    }

    /// A reported segment in direction `dir`: a connection opens or ends.
    fn on_event(&mut self, e: &Event) {
        let dir = (e.side == Side::Ack) as usize;
        if let Some(r) = self.routers[dir].as_mut() {
            let f = e.view.flags;
            let conn = TcpConn { syn: f.syn(), fin: f.fin(), rst: f.rst(), key: || e.view.key, index: None };
            r.on_tcp_departure(e.at, conn, 0, None);
        }
    }
}
/// What the loop keeps between ticks.
struct State {
    /// The side (of the canonical key) whose ACKs cross B -> A, per flow,
    /// learnt from the direction its segments were reported in.
    acker: StdMap<FlowKey, usize>,
    /// What is in the `windows` map.
    written: StdMap<NrKey, NrWindow>,
    rules: Vec<KernelWindow>,
    other_bytes: u64,
    ticks: u64,
    late_ticks: u64,
    map_writes: u64,
    map_errors: u64,
    /// `--delay-elsewhere`: the link settings another hop runs, as JSON.
    not_emulated: Option<String>,
    ngwa: Option<Ngwa>,
    /// The NGWA routers' `W_node`s last written.
    nodes: [Option<u32>; 2],
    /// Ticks run at a stretched period.
    idle_ticks: u64,
}

/// Ticks in a row that changed nothing before the period stretches: no
/// segment reported, no rule written, no `W_node` moved, both queues empty.
const QUIET_TICKS: u32 = 8;

pub fn run<C: WindowController>(args: &Args, mut gw: Option<WindowGateway<C>>) -> Result<String, String> {
    let max_flows = gw.as_ref().map_or(1, |g| g.config().max_flows);
    let ngwa = Ngwa::new(args);
    let report = match (&gw, &ngwa) {
        (Some(_), _) => Report::FlowTable,
        (None, Some(n)) if n.divides() => Report::Connections,
        _ => Report::Nothing,
    };
    let load = Load {
        max_flows: max_flows.min(u32::MAX as usize) as u32,
        report,
        ngwa_router: ngwa.as_ref().is_some_and(|n| n.routers[0].is_some()),
        ngwa_edge: ngwa.as_ref().is_some_and(|n| n.edge),
        mtu: args.mtu.min(u32::MAX as usize) as u32,
    };
    let mut dp = set_up(args, load)?;
    // Held for the run: the kernel counts the programs' runs and time.
    let _stats_on = if args.prog_stats { Some(super::bpf::enable_run_stats()?) } else { None };
    let mut nl = QdiscReader::open().map_err(|e| format!("kernel datapath: rtnetlink: {e}"))?;
    install_signals();
    // Without a controller or an NGWA router the loop only keeps the
    // counters: ten times a second is enough, and spares the forwarding
    // CPU the wake-ups.
    let busy = gw.is_some() || load.ngwa_router;
    let tick = if busy { args.tick } else { args.tick.max(Time::from_millis(100)) };
    let start = monotonic_now();
    let end = args.duration.map(|d| start + d);
    let mut st = State {
        acker: StdMap::new(),
        written: StdMap::new(),
        rules: Vec::new(),
        other_bytes: 0,
        ticks: 0,
        late_ticks: 0,
        map_writes: 0,
        map_errors: 0,
        not_emulated: args.delay_elsewhere.then(|| {
            format!(
                "{{\"delay_ns\":{},\"delay_ba_ns\":{},\"jitter_ns\":{},\"jitter_ba_ns\":{},\"loss\":{},\"loss_ba\":{}}}",
                args.delay.0, args.delay_ba.0, args.jitter.0, args.jitter_ba.0, args.loss, args.loss_ba
            )
        }),
        ngwa,
        nodes: [None; 2],
        idle_ticks: 0,
    };
    // The routers' queues: each direction's buffer, in bytes.
    let capacity = [args.queue.limit.bytes(args.packet_bytes), args.queue_ba.limit.bytes(args.packet_bytes)];
    let unshaped = Rate::mbps(1000);
    let rates = [args.rate.unwrap_or(unshaped), args.rate_ba.unwrap_or(unshaped)];
    let mut queues = [QueueStats::default(); 2];
    set_nodes(&mut dp, &mut st, &queues, capacity, rates);
    let idle = args.tick_idle.max(tick);
    // The programs are attached: the first stats file says so (the testbed
    // starts its traffic once every gateway wrote one).
    if let Some(p) = &args.stats_file {
        write_stats_file(p, &json(&dp, gw.as_ref(), &st, &queues, (tick, idle)));
    }
    let mut next = start + tick;
    let mut next_second = start + Time::from_secs(1);
    // The period: `tick`, stretched (doubled, up to `--tick-idle`) once
    // QUIET_TICKS ticks in a row changed nothing (module documentation).
    let mut period = tick;
    let mut quiet = 0u32;
    while !STOP.load(Ordering::Relaxed) {
        let now = monotonic_now();
        if now < next {
            // Sleep until the tick, or until the programs report segments
            // (a SYN should reach the flow table at once, and a burst of
            // them must not fill the ring while this loop sleeps).
            if wait_readable(dp.progs.events.as_raw_fd(), next.saturating_sub(now))
                && drain(gw.as_mut(), &mut dp, &mut st) > 0
                && period > tick
            {
                // A new segment: back to the short period at once.
                (period, quiet) = (tick, 0);
                next = next.min(monotonic_now() + tick);
            }
            continue;
        }
        st.ticks += 1;
        if now >= next + period {
            st.late_ticks += 1;
        }
        let writes = st.map_writes;
        for (k, sh) in [&dp.shaper_ab, &dp.shaper_ba].into_iter().enumerate() {
            if let Some(sh) = sh {
                if let Ok(Some(q)) = nl.read(sh.ifindex, FIFO_HANDLE) {
                    queues[k] = q;
                }
            }
        }
        let reported = match gw.as_mut() {
            Some(g) => tick_controller(g, &mut dp, &mut st, now, queues[0]),
            None => drain(None::<&mut WindowGateway<C>>, &mut dp, &mut st),
        };
        let moved = set_nodes(&mut dp, &mut st, &queues, capacity, rates);
        let changed = reported > 0
            || st.map_writes != writes
            || moved
            || queues.iter().any(|q| q.backlog_bytes > 0 || q.backlog_packets > 0);
        if changed {
            (period, quiet) = (tick, 0);
        } else {
            quiet += 1;
            if quiet >= QUIET_TICKS {
                period = Time(period.0.saturating_mul(2)).min(idle);
                st.idle_ticks += 1;
            }
        }
        next = now + period;
        if now >= next_second {
            next_second = now + Time::from_secs(1);
            if let Some(g) = gw.as_mut() {
                refresh(g, &mut dp, &st);
            }
            if let Some(p) = &args.stats_file {
                write_stats_file(p, &json(&dp, gw.as_ref(), &st, &queues, (tick, idle)));
            }
        }
        if DUMP.swap(false, Ordering::Relaxed) {
            eprintln!("{}", json(&dp, gw.as_ref(), &st, &queues, (tick, idle)));
        }
        if end.is_some_and(|e| now >= e) {
            break;
        }
    }
    // What was reported before the stop reaches the table (and its counters).
    while report != Report::Nothing && dp.progs.events_pending() {
        drain(gw.as_mut(), &mut dp, &mut st);
    }
    let j = json(&dp, gw.as_ref(), &st, &queues, (tick, idle));
    if let Some(p) = &args.stats_file {
        write_stats_file(p, &j);
    }
    drop(dp);
    Ok(j)
}

/// Waits up to `d` for `fd` to become readable; whether it did.
fn wait_readable(fd: std::os::fd::RawFd, d: Time) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ts = libc::timespec { tv_sec: (d.0 / 1_000_000_000) as libc::time_t, tv_nsec: (d.0 % 1_000_000_000) as _ };
    // SAFETY: one pollfd we own; EINTR (a signal) returns early, as wanted.
    let n = unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
    n > 0 && p.revents & libc::POLLIN != 0
}

/// Reports fed to the flow table per call of [`drain`]: a ring's worth.
const DRAIN_BATCH: usize = 65_536;

/// Feeds the segments the programs reported to the flow table and to the
/// NGWA routers.
fn drain<C: WindowController>(mut g: Option<&mut WindowGateway<C>>, dp: &mut Datapath, st: &mut State) -> usize {
    let acker = &mut st.acker;
    let ngwa = &mut st.ngwa;
    let n = dp.progs.drain(DRAIN_BATCH, |e| {
        if let Some(n) = ngwa.as_mut() {
            n.on_event(&e);
        }
        let Some(g) = g.as_deref_mut() else { return };
        let (ckey, side) = canonical_side(e.view.key);
        // The ACKs cross B -> A: sent by the side that reports at nr_ack.
        let b_side = if e.side == Side::Ack { side } else { 1 - side };
        if e.view.flags.syn() || !acker.contains_key(&ckey) {
            acker.insert(ckey, b_side);
        }
        match e.side {
            Side::Data => g.on_data(e.at, &e.view),
            Side::Ack => {
                let _ = g.on_ack(e.at, &e.view);
            }
        }
    });
    // Flows gone from the table (ended, expired, evicted: a SYN flood
    // evicts all the time) leave `acker` once it outgrows the table.
    if let Some(g) = g {
        if acker.len() > 2 * g.config().max_flows.max(1) {
            acker.retain(|k, _| g.tracks(k));
        }
    }
    n
}

/// Each NGWA router's `W_node` from its direction's queue as last read,
/// written into the map where it moved; whether one did.
fn set_nodes(
    dp: &mut Datapath,
    st: &mut State,
    queues: &[QueueStats; 2],
    capacity: [u64; 2],
    rates: [Rate; 2],
) -> bool {
    let Some(n) = st.ngwa.as_ref() else { return false };
    let mut moved = false;
    for (dir, r) in n.routers.iter().enumerate() {
        let Some(r) = r else { continue };
        let q = QueueState {
            backlog_bytes: queues[dir].backlog_bytes as u64,
            capacity_bytes: capacity[dir],
            rate: rates[dir],
        };
        let w = r.w_node(&q);
        if st.nodes[dir] != Some(w) {
            moved = true;
            st.nodes[dir] = Some(w);
            if dp.progs.set_node(dir as u32, w).is_err() {
                st.map_errors += 1;
            }
        }
    }
    moved
}

/// The values data brought to the NGWA edge since the last tick, per flow,
/// handed to the controller (the [`Ngwa`] documentation says how).
fn ngwa_values<C: WindowController>(g: &mut WindowGateway<C>, dp: &Datapath, st: &mut State, now: Time) {
    let Some(n) = st.ngwa.as_mut().filter(|n| n.edge) else { return };
    for key in st.written.keys() {
        let Ok(e) = dp.progs.seen.get(key, 0) else { continue };
        let (sum0, n0) = n.read.get(key).copied().unwrap_or((0, 0));
        if e.ngwa_n <= n0 {
            continue;
        }
        n.read.insert(*key, (e.ngwa_sum, e.ngwa_n));
        let count = e.ngwa_n - n0;
        // The data direction: the reverse of the ACKs' key.
        let data = key.flow_key().reversed();
        let seg = TcpView {
            key: data,
            flags: TcpFlags::ACK,
            seq: 0,
            ack: 0,
            window: 0,
            wscale: None,
            mss: None,
            payload_len: 1,
        };
        if count > 1 {
            // (The programs update the three fields one by one: a copy may
            // hold a sum a value short of its count; saturate.)
            let others = e.ngwa_sum.saturating_sub(sum0).saturating_sub(e.ngwa_last as u64);
            let mean = (others / (count - 1)).min(u32::MAX as u64) as u32;
            for _ in 1..count.min(1 << 16) {
                g.on_inband(now, &seg, &InBand::Ngwa(mean));
            }
        }
        g.on_inband(now, &seg, &InBand::Ngwa(e.ngwa_last));
    }
    n.read.retain(|k, _| st.written.contains_key(k));
}

/// One tick of the controller: the reported segments, the queue, the other
/// traffic, then every flow's rule into the map.
fn tick_controller<C: WindowController>(
    g: &mut WindowGateway<C>,
    dp: &mut Datapath,
    st: &mut State,
    now: Time,
    q: QueueStats,
) -> usize {
    let reported = drain(Some(&mut *g), dp, st);
    ngwa_values(g, dp, st, now);
    // The watched queue, sampled once per tick (module documentation); an
    // unshaped direction has no kernel queue and shows the controller an
    // empty one, as the packet datapath's unlimited queue stays.
    let ev = QueueEvent {
        kind: QueueEventKind::Enqueue,
        size: 0,
        backlog_bytes: q.backlog_bytes as u64,
        backlog_packets: q.backlog_packets,
    };
    g.on_queue(now, &ev);
    let other = dp.progs.counter(Counter::OtherBytes.at(0));
    if other > st.other_bytes {
        g.on_data_other(now, (other - st.other_bytes).min(u32::MAX as u64) as u32);
        st.other_bytes = other;
    }
    let acker = &mut st.acker;
    g.kernel_windows(now, |k| acker.get(k).copied(), &mut st.rules);
    let mut live: StdMap<NrKey, NrWindow> = StdMap::with_capacity(st.rules.len());
    for w in &st.rules {
        let key = NrKey::of(&w.ack_key);
        let entry = NrWindow::of(w);
        if st.written.get(&key) != Some(&entry) {
            st.map_writes += 1;
            if dp.progs.windows.insert(key, entry, 0).is_err() {
                st.map_errors += 1;
                continue;
            }
        }
        live.insert(key, entry);
    }
    for key in st.written.keys() {
        if !live.contains_key(key) {
            let _ = dp.progs.windows.remove(key);
            let _ = dp.progs.seen.remove(key);
        }
    }
    st.written = live;
    reported
}

/// Flows whose packets the kernel no longer reports stay off the idle
/// timeout: their last packet time is read back from the map.
fn refresh<C: WindowController>(g: &mut WindowGateway<C>, dp: &mut Datapath, st: &State) {
    for key in st.written.keys() {
        if let Ok(e) = dp.progs.seen.get(key, 0) {
            if e.last_ns != 0 {
                g.saw_flow(Time(e.last_ns), &key.flow_key());
            }
        }
    }
}

fn json<C: WindowController>(
    dp: &Datapath,
    gw: Option<&WindowGateway<C>>,
    st: &State,
    queues: &[QueueStats; 2],
    (tick, idle): (Time, Time),
) -> String {
    let c = dp.progs.counters();
    let dir = |d: u32, q: &QueueStats, shaped: bool| {
        let at = |k: Counter| c[k.at(d) as usize];
        let received = at(Counter::Packets);
        let dropped = if shaped { q.drops as u64 } else { 0 };
        DirStats {
            received,
            forwarded: received.saturating_sub(dropped),
            forwarded_bytes: if shaped { q.sent_bytes } else { at(Counter::Bytes) },
            dropped_queue: dropped,
            tcp: at(Counter::Tcp),
            // Fragments count as non-TCP too, as on the packet datapath.
            non_tcp: at(Counter::Other) + at(Counter::NotIpv4) + at(Counter::Fragments),
            fragments: at(Counter::Fragments),
            malformed_passed: at(Counter::Malformed),
            rewritten: if d == 1 { c[Counter::ACKS_REWRITTEN as usize] } else { 0 },
            ..DirStats::default()
        }
    };
    let stats = Stats {
        a_to_b: dir(0, &queues[0], dp.shaper_ab.is_some()),
        b_to_a: dir(1, &queues[1], dp.shaper_ba.is_some()),
    };
    // The programs' runs and run time (counted while the kernel's eBPF
    // statistics are on: --prog-stats, or kernel.bpf_stats_enabled).
    let runs = dp.progs.run_stats().unwrap_or_default();
    let kernel = format!(
        "{{\"tick_ns\":{},\"tick_idle_ns\":{},\"ticks\":{},\"idle_ticks\":{},\"late_ticks\":{},\"acks_seen\":{},\"acks_rewritten\":{},\"events\":{},\
         \"events_lost\":{},\"map_writes\":{},\"map_errors\":{},\"flows_in_map\":{},\"backlog_bytes\":{},\
         \"prog_runs\":[{},{}],\"prog_ns\":[{},{}]}}",
        tick.0,
        idle.0,
        st.ticks,
        st.idle_ticks,
        st.late_ticks,
        c[Counter::ACKS_SEEN as usize],
        c[Counter::ACKS_REWRITTEN as usize],
        c[Counter::EVENTS as usize],
        c[Counter::EVENTS_LOST as usize],
        st.map_writes,
        st.map_errors,
        st.written.len(),
        queues[0].backlog_bytes,
        runs[0].0,
        runs[1].0,
        runs[0].1,
        runs[1].1
    );
    let mut extra = vec![("datapath", "\"kernel\"".to_string()), ("kernel", kernel)];
    if let Some(n) = st.not_emulated.as_ref() {
        extra.push(("not_emulated", n.clone()));
    }
    if let Some(n) = st.ngwa.as_ref() {
        let role = Roles { router: n.routers[0].is_some(), edge: n.edge }.name();
        extra.push(("ngwa_role", format!("\"{role}\"")));
        extra.push(("ngwa", ngwa_stats(&c, 0).to_json()));
        if let Some(r) = &n.routers[0] {
            extra.push(("ngwa_active_flows", r.active_flows().to_string()));
        }
        if n.routers[1].is_some() {
            extra.push(("ngwa_back", ngwa_stats(&c, 1).to_json()));
        }
        extra.push((
            "ngwa_unsupported",
            (c[NgwaCounter::Unsupported.at(0) as usize] + c[NgwaCounter::Unsupported.at(1) as usize]).to_string(),
        ));
    }
    match gw {
        Some(g) => {
            extra.push(("controller", format!("\"{}\"", g.config().controller.kind().name())));
            extra.push(("controller_stats", stats_json(g)));
        }
        None => extra.push(("controller", "\"none\"".into())),
    }
    stats.to_json(&extra)
}

/// The NGWA counters of direction `dir`, as the packet datapath's.
fn ngwa_stats(c: &[u64], dir: u32) -> NgwaWireStats {
    let at = |k: NgwaCounter| c[k.at(dir) as usize];
    NgwaWireStats {
        mss_clamped: at(NgwaCounter::MssClamped),
        inserted: at(NgwaCounter::Inserted),
        lowered: at(NgwaCounter::Lowered),
        kept: at(NgwaCounter::Kept),
        too_big: at(NgwaCounter::TooBig),
        options_full: at(NgwaCounter::OptionsFull),
        bad_options: at(NgwaCounter::BadOptions),
        values_read: at(NgwaCounter::ValuesRead),
        stripped: at(NgwaCounter::Stripped),
    }
}
