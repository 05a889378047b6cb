//! The eBPF object built from `bpf/datapath.bpf.c` by `build.rs`, loaded and
//! attached with aya: `nr_data` on A's ingress, `nr_ack` on B's. On this
//! kernel (>= 6.6) the programs attach through TCX links, which belong to
//! this process: they go when it ends, however it ends. Older kernels get
//! the `clsact` qdisc and `cls_bpf` filters, which the drop removes.

use aya::maps::{Array, HashMap, MapData, PerCpuArray, RingBuf};
use aya::programs::{tc, SchedClassifier, TcAttachType, TestRun, TestRunOptions};
use aya::{Ebpf, EbpfLoader};
use std::os::fd::AsRawFd;

use super::event::Event;
use super::maps::{Counter, NrKey, NrNode, NrSeen, NrWindow};

// SAFETY: all are #[repr(C)] plain integers, no padding left unnamed.
unsafe impl aya::Pod for NrKey {}
unsafe impl aya::Pod for NrWindow {}
unsafe impl aya::Pod for NrSeen {}
unsafe impl aya::Pod for NrNode {}

/// What the programs report to user space (`report_segments`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// Nothing: no controller, no NGWA router dividing by flows.
    Nothing = 0,
    /// What a controller's flow table needs.
    FlowTable = 1,
    /// SYNs, FINs and RSTs (an NGWA router's connection count).
    Connections = 2,
}

/// How a datapath is loaded.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    /// Size of the per-flow maps.
    pub max_flows: u32,
    pub report: Report,
    /// NGWA's roles (router: MSS clamp and marks, both directions; edge:
    /// values read and options stripped, A -> B).
    pub ngwa_router: bool,
    pub ngwa_edge: bool,
    /// The largest IPv4 packet an NGWA router may make.
    pub mtu: u32,
}

impl Load {
    /// A datapath that only counts, or feeds a controller (`report`).
    pub fn plain(max_flows: u32, report: bool) -> Load {
        let report = if report { Report::FlowTable } else { Report::Nothing };
        Load { max_flows, report, ngwa_router: false, ngwa_edge: false, mtu: 1500 }
    }
}

/// Turns the kernel's run-time statistics of eBPF programs on until the
/// returned descriptor is dropped (`BPF_ENABLE_STATS`, Linux 5.8).
pub fn enable_run_stats() -> Result<std::os::fd::OwnedFd, String> {
    aya::sys::enable_stats(aya::sys::Stats::RunTime).map_err(|e| err("BPF_ENABLE_STATS", e))
}

static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/datapath.bpf.o"));

/// The loaded programs and their maps.
pub struct Programs {
    // Declared first: dropped first, detaching the programs before the
    // clsact qdiscs (if any) go.
    _ebpf: Ebpf,
    pub windows: HashMap<MapData, NrKey, NrWindow>,
    pub seen: HashMap<MapData, NrKey, NrSeen>,
    pub ngwa_node: Array<MapData, NrNode>,
    pub events: RingBuf<MapData>,
    counters: PerCpuArray<MapData, u64>,
    clsact: Vec<String>,
}

/// The two programs: A's ingress, B's ingress.
const PROGRAMS: [&str; 2] = ["nr_data", "nr_ack"];

fn classifier<'a>(ebpf: &'a mut Ebpf, prog: &str) -> Result<&'a mut SchedClassifier, String> {
    ebpf.program_mut(prog).ok_or_else(|| err(prog, "not in the object"))?.try_into().map_err(|e| err(prog, e))
}

fn err(what: &str, e: impl std::fmt::Display) -> String {
    // aya's errors put the verifier log or the syscall in their sources.
    format!("kernel datapath: {what}: {e}")
}

impl Programs {
    /// Loads and verifies the object as `load` says, attached nowhere yet.
    pub fn load(load: Load) -> Result<Programs, String> {
        let report = load.report as u8;
        let (router, edge) = (load.ngwa_router as u8, load.ngwa_edge as u8);
        let max_flows = load.max_flows.max(1);
        let mut ebpf = EbpfLoader::new()
            .map_max_entries("windows", max_flows)
            .map_max_entries("seen", max_flows)
            .override_global("report_segments", &report, true)
            .override_global("ngwa_router", &router, true)
            .override_global("ngwa_edge", &edge, true)
            .override_global("ngwa_mtu", &load.mtu, true)
            .load(OBJECT)
            .map_err(|e| err("loading the eBPF object (root, or CAP_BPF and CAP_NET_ADMIN, is needed)", e))?;
        for prog in PROGRAMS {
            classifier(&mut ebpf, prog)?.load().map_err(|e| err(&format!("verifying {prog}"), e))?;
        }
        let map = |name: &str, ebpf: &mut Ebpf| ebpf.take_map(name).ok_or_else(|| err(name, "no such map"));
        let windows = HashMap::try_from(map("windows", &mut ebpf)?).map_err(|e| err("windows", e))?;
        let seen = HashMap::try_from(map("seen", &mut ebpf)?).map_err(|e| err("seen", e))?;
        let ngwa_node = Array::try_from(map("ngwa_node", &mut ebpf)?).map_err(|e| err("ngwa_node", e))?;
        let events = RingBuf::try_from(map("events", &mut ebpf)?).map_err(|e| err("events", e))?;
        let counters = PerCpuArray::try_from(map("counters", &mut ebpf)?).map_err(|e| err("counters", e))?;
        Ok(Programs { _ebpf: ebpf, windows, seen, ngwa_node, events, counters, clsact: Vec::new() })
    }

    /// Loads the object (as [`Programs::load`]) and attaches `nr_data` to
    /// `a`'s ingress, `nr_ack` to `b`'s.
    pub fn attach(a: &str, b: &str, load: Load) -> Result<Programs, String> {
        let mut p = Programs::load(load)?;
        for (prog, iface) in PROGRAMS.into_iter().zip([a, b]) {
            let c = classifier(&mut p._ebpf, prog)?;
            if let Err(first) = c.attach(iface, TcAttachType::Ingress) {
                // A kernel without TCX: cls_bpf under a clsact qdisc.
                tc::qdisc_add_clsact(iface).map_err(|e| err(&format!("{iface}: {first}; clsact"), e))?;
                p.clsact.push(iface.to_string());
                c.attach(iface, TcAttachType::Ingress).map_err(|e| err(&format!("attaching {prog} to {iface}"), e))?;
            }
        }
        Ok(p)
    }

    /// Each program's runs and total run time in nanoseconds (`nr_data`,
    /// `nr_ack`), as the kernel counts them while its eBPF statistics are
    /// on ([`enable_run_stats`]; zeros otherwise).
    pub fn run_stats(&self) -> Result<[(u64, u64); 2], String> {
        let mut out = [(0, 0); 2];
        for (o, prog) in out.iter_mut().zip(PROGRAMS) {
            let p: &SchedClassifier = self
                ._ebpf
                .program(prog)
                .ok_or_else(|| err(prog, "not in the object"))?
                .try_into()
                .map_err(|e| err(prog, e))?;
            let info = p.info().map_err(|e| err(prog, e))?;
            *o = (info.run_count(), info.run_time().as_nanos() as u64);
        }
        Ok(out)
    }

    /// An NGWA router's `W_node` for direction `dir` (0: A -> B).
    pub fn set_node(&mut self, dir: u32, w: u32) -> Result<(), String> {
        self.ngwa_node.set(dir, NrNode { w, valid: 1 }, 0).map_err(|e| err("ngwa_node", e))
    }

    /// Runs program `prog` once on `frame` in the kernel
    /// (`BPF_PROG_TEST_RUN`), as if it arrived on an interface: the
    /// program's verdict and the frame as it left.
    pub fn run_on(&mut self, prog: &str, frame: &[u8]) -> Result<(u32, Vec<u8>), String> {
        let (verdict, out, _) = self.time_on(prog, frame, 1)?;
        Ok((verdict, out))
    }

    /// [`Programs::run_on`] `repeat` times in the kernel; also the mean time
    /// per run, ns (the benchmark's cost of the program per frame).
    pub fn time_on(&mut self, prog: &str, frame: &[u8], repeat: u32) -> Result<(u32, Vec<u8>, f64), String> {
        let c = classifier(&mut self._ebpf, prog)?;
        let mut out = vec![0u8; frame.len() + 256];
        let opts =
            TestRunOptions { data_in: Some(frame), data_out: Some(&mut out), repeat, ..TestRunOptions::default() };
        let r = c.test_run(opts).map_err(|e| err(&format!("test run of {prog}"), e))?;
        out.truncate(r.data_size_out as usize);
        Ok((r.return_value, out, r.duration.as_nanos() as f64))
    }

    /// The reported segments now in the ring, in order, at most `limit` of
    /// them (under a flood the ring refills as fast as it drains: the
    /// caller's other work must still get its turn); how many.
    pub fn drain(&mut self, limit: usize, mut f: impl FnMut(Event)) -> usize {
        let mut n = 0;
        while n < limit {
            let Some(item) = self.events.next() else { break };
            if let Some(e) = Event::decode(&item) {
                f(e);
            }
            n += 1;
        }
        n
    }

    /// Whether reports wait in the ring.
    pub fn events_pending(&self) -> bool {
        let mut p = libc::pollfd { fd: self.events.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd we own; a zero timeout.
        unsafe { libc::poll(&mut p, 1, 0) > 0 && p.revents & libc::POLLIN != 0 }
    }

    /// Every counter, summed over the CPUs (index: [`Counter`]).
    pub fn counters(&self) -> Vec<u64> {
        (0..Counter::COUNT).map(|i| self.counter(i)).collect()
    }

    /// One counter, summed over the CPUs: one system call, where
    /// [`Programs::counters`] makes one per counter (the controller loop
    /// reads one every tick; the statistics, all, once a second).
    pub fn counter(&self, i: u32) -> u64 {
        self.counters.get(&i, 0).map_or(0, |v| v.iter().sum())
    }
}

impl Drop for Programs {
    fn drop(&mut self) {
        for iface in &self.clsact {
            let _ = super::tc::run("tc", &["qdisc", "del", "dev", iface, "clsact"]);
        }
    }
}
