//! Command line of `netreturn-gateway` (hand-written: a dozen flags do not
//! justify a parser dependency and its build time).
//!
//! The link and controller settings have one vocabulary, the scenario
//! files' (docs/scenarios.md): `--config FILE` reads a scenario's bottleneck
//! link with the simulator's own loader, and the flags `--rate`, `--delay`,
//! `--queue`, `--loss`, `--controller` and `--ctl` are shorthands for the
//! same keys, parsed by the same code (`netreturn_base::units`,
//! `netreturn_control::registry`).

use netreturn_base::units::{parse_rate, parse_size, parse_time};
use netreturn_base::{Rate, Size, Time};
use netreturn_control::queue::aqm::AqmParams;
use netreturn_control::queue::{Discipline, Limit, RedParams};
use netreturn_control::{ControllerKind, GatewayConfig, GatewayParams, Method, QueueKind};
use netreturn_scenario::ngwa::NgwaSpec;
use netreturn_scenario::scenario::{parse_override, Scenario, TopologySpec};
use netreturn_scenario::{LinkDir, Resolved};

/// The usage text; `{controllers}` and `{queues}` are filled from the
/// registry ([`usage`]).
const USAGE: &str = "\
netreturn-gateway: transparent layer-2 bridge with link emulation and window control

USAGE: netreturn-gateway --a IFACE --b IFACE [options]

  --a IFACE            interface on the data senders' side (data flows A -> B)
  --b IFACE            interface on the receivers' side (ACKs flow B -> A)
  --config FILE        a scenario file (docs/scenarios.md): its bottleneck link,
                       resolved as the simulator resolves it, sets both
                       directions: rate, delay, queue, buffer, red, loss (and
                       loss_direction), the controller and its table; the
                       reverse direction as `reverse = {...}` says (default:
                       same rate, delay and buffer, DropTail); 1p weighs
                       the scenario's packet (segment + 52 B); the default
                       MSS is its segment size
  --set NAME=VALUE     override a [params] entry of --config (repeatable)
  --rate RATE          line rate A -> B, e.g. 100mbit, 45Mbps, 1Gbit (default: unlimited)
  --rate-ba RATE       line rate B -> A (default: same as --rate)
  --delay TIME         one-way delay A -> B, e.g. 10ms, 250us (default 0)
  --delay-ba TIME      one-way delay B -> A (default: same as --delay)
  --jitter TIME        A -> B delay variation: each frame's delay is the delay
                       plus a uniform draw in [-TIME, +TIME] (seeded by --seed);
                       frames keep their order (a frame drawn earlier than its
                       predecessor leaves with it) unless --jitter-reorder
                       (default 0; allowed with --config: a scenario link has
                       no jitter key)
  --jitter-ba TIME     B -> A delay variation (default: same as --jitter)
  --jitter-reorder     release every frame at its own draw, reordering them as
                       NetEm does (default: keep the order)
  --queue SPEC         A -> B queue: droptail,bytes=SIZE | droptail,packets=N |
                       red,bytes=SIZE[,min_th=SIZE,max_th=SIZE,w_q=X,max_p=X,gentle=B,byte_mode=B,
                       ecn=B,hard_drop=B] | ared,bytes=SIZE[,...] | fq_codel,packets=N[,ecn=B,
                       target=TIME,interval=TIME,flows=N,quantum=SIZE] | codel | pie | fq_pie |
                       dualpi2 | cobalt ... (queues: {queues}; the keys after the limit are
                       the scenario's red or aqm table; min, max, wq, maxp: short
                       forms of the red keys; default droptail,packets=100,
                       a scenario link's default buffer)
  --queue-ba SPEC      B -> A queue (default droptail,packets=100)
  --loss P             Bernoulli loss probability A -> B (default 0)
  --loss-ba P          Bernoulli loss probability B -> A (default 0)
  --controller NAME    none | {controllers} (default none:
                       link emulator mode)
  --ctl KEY=VALUE      controller parameter: a key of the scenario's
                       gateway.<controller> table (docs/mechanisms.md), or
                       assume_wscale, buffer, capacity, max_flows, idle_timeout
  --ngwa KEY=VALUE     NGWA (docs/ngwa.md): a key of the scenario's [ngwa] table,
                       e.g. --ngwa mode=6 --ngwa role=receiver-edge; role is
                       router (mark the A -> B data with the free space of the
                       A -> B queue, clamp SYNs' MSS), receiver-edge (read the
                       mark, lower the ACKs' window to it, strip the option) or
                       both; with --config, the file's [ngwa] table
  --mtu BYTES          largest IP packet of the links (default 1500): NGWA never
                       grows a packet past it and clamps the MSS to MTU - 48
  --mss BYTES          default MSS for flows whose SYN had none (default 1460)
  --seed N             master seed for loss and RED draws (default 1)
  --stats-file PATH    rewrite the JSON counters there every second
  --duration SECS      stop after this long (default: until SIGINT/SIGTERM)
  --max-frame BYTES    frames above this pass untouched (default 1518)
  --spin-us US         busy-poll when the next departure is this close (default 50)
  --idle-spin-us US    keep busy-polling this long after the last frame before
                       sleeping (default 0: sleep at once; costs CPU, saves wake-ups)
  --batch N            frames read per interface per loop turn (default 64)
  --io ring|mmsg       packet I/O: PACKET_MMAP rings (default; falls back to
                       mmsg when rings cannot be set up) or recvmmsg/sendmmsg
  --ring-frames N      slots of each interface's receive ring (default 4096)
  --tx-ring-frames N   slots of each interface's transmit ring (default 512)
  --datapath packet|kernel
                       packet (default): frames pass through this process
                       (AF_PACKET), every setting above works; kernel: the
                       kernel bridges A and B and shapes each direction with
                       htb over a FIFO of the buffer, eBPF programs lower the
                       ACKs' windows, the controller runs here every --tick
                       (droptail only; no delay, jitter or loss: this
                       kernel has no netem; docs/gateway.md)
  --tick TIME          the kernel datapath's controller period (default 1ms)
  --tick-idle TIME     the longest period it stretches to while nothing changes
                       (no segment reported, no window moved, empty queues;
                       default 16ms; equal to --tick: never stretched)
  --prog-stats         kernel datapath: count the eBPF programs' runs and run
                       time (the kernel's BPF_ENABLE_STATS, a clock read per
                       run) and report them (kernel.prog_runs, kernel.prog_ns)
  --delay-elsewhere    kernel datapath: the link's delay, jitter and loss (of
                       --config's scenario, say) run on another hop, such as a
                       packet-datapath gateway in front; they are reported in
                       the JSON as not emulated here, not refused
  --check              print both directions as they would run (rate, delay,
                       loss, queue, controllers) and exit; no interface is opened

Signals: SIGUSR1 prints the counters to stderr; SIGINT/SIGTERM stop and print
them as JSON on stdout.
";

/// The usage text, with the controllers and queues of the registry
/// (`netreturn_control::registry`), so a new one shows up here unasked.
pub fn usage() -> String {
    let controllers: Vec<&str> = ControllerKind::ALL.iter().map(|k| k.name()).collect();
    let queues: Vec<&str> = QueueKind::ALL.iter().map(|q| q.name()).collect();
    USAGE.replace("{controllers}", &controllers.join(" | ")).replace("{queues}", &queues.join(" | "))
}

/// A parsed command line.
#[derive(Clone, Debug)]
pub struct Args {
    pub iface_a: String,
    pub iface_b: String,
    pub rate: Option<Rate>,
    pub rate_ba: Option<Rate>,
    pub delay: Time,
    pub delay_ba: Time,
    /// Delay variation A -> B and B -> A (`--jitter`, `--jitter-ba`): the
    /// half-width of the uniform draw added to each frame's delay.
    pub jitter: Time,
    pub jitter_ba: Time,
    /// `--jitter-reorder`: each frame leaves at its own draw.
    pub jitter_reorder: bool,
    pub queue: QueueSpec,
    pub queue_ba: QueueSpec,
    pub loss: f64,
    pub loss_ba: f64,
    /// The window controller, `None` for link-emulator mode.
    pub controller: Option<ControllerKind>,
    /// The controllers' parameters, as a scenario's `gateway` table.
    pub gateway: GatewayParams,
    /// The B -> A direction's window controller, resolved (it watches the
    /// B -> A queue and rewrites the ACKs going A -> B): a scenario's
    /// `reverse = { queue = "awm" }` (seed 002 footnote 1).
    pub gateway_ba: Option<GatewayConfig>,
    /// The A -> B controller's configuration as `--config` resolved it
    /// (`None` with flags: built from `gateway` and the `--ctl` keys).
    pub gateway_ab: Option<GatewayConfig>,
    /// What one packet weighs in a packet limit and in RED's typical
    /// packet: 1500 B with flags, the scenario's packet with `--config`.
    pub packet_bytes: u32,
    /// Gateway-only settings (`--ctl buffer= capacity= max_flows=
    /// idle_timeout=`): `B` and `C` when not the queue's and the rate.
    pub ctl_buffer: Option<Size>,
    pub ctl_capacity: Option<Rate>,
    pub max_flows: Option<usize>,
    pub idle_timeout: Option<Time>,
    /// NGWA (`--ngwa` or the `[ngwa]` table of `--config`), when on
    /// (a mode from 1 to 8).
    pub ngwa: Option<NgwaSpec>,
    pub mtu: usize,
    pub mss: u32,
    pub seed: u64,
    pub stats_file: Option<String>,
    pub duration: Option<Time>,
    pub max_frame: usize,
    pub spin: Time,
    pub idle_spin: Time,
    pub batch: usize,
    pub io: Io,
    pub ring_frames: usize,
    pub tx_ring_frames: usize,
    /// `--check`: print the configuration and exit.
    pub check: bool,
    /// `--datapath`: who moves the frames.
    pub datapath: Datapath,
    /// `--tick`: how often the kernel datapath's controller runs.
    pub tick: Time,
    /// `--tick-idle`: the longest period the kernel datapath's loop
    /// stretches to while nothing changes.
    pub tick_idle: Time,
    /// `--prog-stats`: the kernel datapath turns on the kernel's run-time
    /// statistics of eBPF programs (`BPF_ENABLE_STATS`) while it runs and
    /// reports its programs' runs and nanoseconds.
    pub prog_stats: bool,
    /// `--delay-elsewhere`: the kernel datapath leaves the link's delay,
    /// jitter and loss to another hop (and says so) instead of refusing.
    pub delay_elsewhere: bool,
}

/// Who moves the frames (`--datapath`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datapath {
    /// This process, through AF_PACKET (every link feature; portable).
    Packet,
    /// The kernel: a bridge, `htb` shaping and eBPF programs that rewrite
    /// the ACKs (`crate::kernel`).
    Kernel,
}

/// How frames move between the interfaces and the bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    /// `PACKET_MMAP` receive and transmit rings.
    Ring,
    /// `recvmmsg` / `sendmmsg`.
    Mmsg,
}

/// One direction's queue: a discipline, its limit, its `red` or `aqm`
/// table.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSpec {
    pub kind: QueueKind,
    pub limit: Limit,
    pub red: Option<RedParams>,
    pub aqm: Option<AqmParams>,
}

/// Short names of the `red` keys accepted by `--queue` (older spelling).
const RED_SHORT: &[(&str, &str)] = &[("min", "min_th"), ("max", "max_th"), ("wq", "w_q"), ("maxp", "max_p")];

impl QueueSpec {
    /// `red,bytes=100kB,min_th=10kB,...`: the discipline, its limit and its
    /// `red` keys, each value read as in a scenario file.
    pub fn parse(s: &str) -> Result<QueueSpec, String> {
        let mut parts = s.split(',');
        let name = parts.next().unwrap_or("");
        let kind = QueueKind::ALL.iter().copied().find(|q| q.name() == name).ok_or_else(|| {
            let names: Vec<&str> = QueueKind::ALL.iter().map(|q| q.name()).collect();
            format!("--queue: unknown queue {name:?}; allowed: {}", names.join(", "))
        })?;
        let mut limit = None;
        let mut red = toml::Table::new();
        for p in parts {
            let (k, v) = p.split_once('=').ok_or_else(|| format!("--queue: {p:?} is not KEY=VALUE"))?;
            match k {
                "bytes" => limit = Some(Limit::from(parse_size(v).map_err(|e| format!("--queue bytes: {e}"))?)),
                "packets" => {
                    let n: u32 =
                        v.parse().map_err(|_| format!("--queue packets: {v:?} is not a whole number of packets"))?;
                    limit = Some(Limit::Packets(n));
                }
                _ => {
                    let key = RED_SHORT.iter().find(|(s, _)| *s == k).map_or(k, |(_, long)| long);
                    red.insert(key.to_string(), parse_override(v));
                }
            }
        }
        let limit = limit.ok_or_else(|| format!("--queue {s:?} needs bytes=SIZE or packets=N"))?;
        if limit.bytes(1500) == 0 {
            return Err(format!("--queue {s:?}: the limit must be larger than zero"));
        }
        let (mut red_t, mut aqm_t) = (None, None);
        if !red.is_empty() {
            if kind == QueueKind::DropTail {
                return Err(format!("--queue {s:?}: droptail takes no red keys; allowed: bytes, packets"));
            }
            let table = toml::Value::Table(red);
            let bad = |e: toml::de::Error| format!("--queue {s:?}: {}", e.message());
            if kind.decides_at_dequeue() {
                aqm_t = Some(table.try_into::<AqmParams>().map_err(bad)?);
            } else {
                red_t = Some(table.try_into::<RedParams>().map_err(bad)?);
            }
        }
        // Each table's domain, as the queue will be built (1500-byte packets).
        kind.check(limit, 1500, red_t.as_ref(), aqm_t.as_ref())
            .map_err(|(_, key, m)| format!("--queue {s:?}: {key}: {m}"))?;
        Ok(QueueSpec { kind, limit, red: red_t, aqm: aqm_t })
    }

    /// DropTail with a scenario link's default buffer
    /// ([`netreturn_scenario::scenario::DEFAULT_BUFFER_PACKETS`]).
    pub fn default_droptail() -> QueueSpec {
        let limit = Limit::Packets(netreturn_scenario::scenario::DEFAULT_BUFFER_PACKETS);
        QueueSpec { kind: QueueKind::DropTail, limit, red: None, aqm: None }
    }

    /// One direction of a resolved scenario link.
    pub fn of(l: &LinkDir) -> QueueSpec {
        QueueSpec { kind: l.queue, limit: l.limit, red: l.red.clone(), aqm: l.aqm.clone() }
    }

    /// The discipline, given the egress rate (RED's idle decay needs the
    /// transmission time of a typical packet) and the typical packet size.
    pub fn discipline(&self, rate: Option<Rate>, mean_packet: u32) -> Result<Discipline, String> {
        // Without a rate there is no idle decay to model; 1 Gb/s stands in.
        let idle = rate.unwrap_or(Rate::mbps(1000)).tx_time(mean_packet as u64);
        Ok(self.kind.discipline(self.limit, mean_packet, idle, self.red.as_ref()))
    }
}

/// Keys of `--ctl` that belong to the real gateway rather than to a
/// controller's table.
const GATEWAY_ONLY: &[&str] = &["buffer", "capacity", "max_flows", "idle_timeout"];

/// `gateway.<controller>` from `--ctl KEY=VALUE` pairs, read by the same
/// serde types as a scenario's table.
fn gateway_from_ctl(kind: ControllerKind, ctl: &[(String, String)]) -> Result<GatewayParams, String> {
    let mut sub = toml::Table::new();
    let mut top = toml::Table::new();
    for (k, v) in ctl {
        let v = parse_override(v);
        if k == "assume_wscale" {
            top.insert(k.clone(), v);
        } else {
            sub.insert(k.clone(), v);
        }
    }
    top.insert(kind.name().to_string(), toml::Value::Table(sub));
    toml::Value::Table(top).try_into::<GatewayParams>().map_err(|e| {
        let mut allowed: Vec<&str> = kind.keys().to_vec();
        allowed.extend(["assume_wscale"].iter().chain(GATEWAY_ONLY));
        format!("--ctl: {} (controller {}; allowed keys: {})", e.message(), kind.name(), allowed.join(", "))
    })
}

/// A controller name: `none` or one of the registry's.
fn parse_controller(v: &str) -> Result<Option<ControllerKind>, String> {
    if v == "none" {
        return Ok(None);
    }
    ControllerKind::ALL.iter().copied().find(|k| k.name() == v).map(Some).ok_or_else(|| {
        let names: Vec<&str> = ControllerKind::ALL.iter().map(|k| k.name()).collect();
        format!("--controller: unknown controller {v:?}; allowed: none, {}", names.join(", "))
    })
}

/// What `--config FILE` sets: the scenario's bottleneck link, resolved by
/// the scenario model the simulator uses (`netreturn_scenario::Resolved`),
/// both directions. Errors name the file and the field.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigLink {
    /// The bottleneck's data direction (A -> B).
    pub ab: LinkDir,
    /// Its reverse (B -> A): `reverse = {...}` and `loss_direction` applied.
    pub ba: LinkDir,
    /// The scenario's segment size: the MSS of flows whose SYN had none.
    pub mss: u32,
    /// The scenario's `[ngwa]` table.
    pub ngwa: Option<NgwaSpec>,
}

impl ConfigLink {
    pub fn load(path: &str, sets: &[(String, String)]) -> Result<ConfigLink, String> {
        let s = Scenario::from_file(std::path::Path::new(path), sets).map_err(|e| e.to_string())?;
        if !matches!(s.topology, TopologySpec::Dumbbell { .. } | TopologySpec::MultiRtt { .. }) {
            return Err(s
                .error(
                    "topology.kind",
                    "the gateway runs one link, a topology's bottleneck; allowed: dumbbell, multi-rtt".into(),
                )
                .to_string());
        }
        let r = Resolved::new(&s).map_err(|e| e.to_string())?;
        let b = r.topology.bottleneck.expect("a dumbbell has a bottleneck") as usize;
        let (ab, ba) = (r.links[b].clone(), r.links[b ^ 1].clone());
        for d in [&ab, &ba] {
            if let Some(k) = d.stage() {
                let allowed: Vec<&str> =
                    Method::all().filter(|m| !matches!(m, Method::Stage(_))).map(Method::name).collect();
                return Err(s
                    .error(
                        &format!("{}.queue", d.field),
                        format!(
                            "the real gateway does not run {:?} yet (only its header codec exists); allowed: {}",
                            k.name(),
                            allowed.join(", ")
                        ),
                    )
                    .to_string());
            }
        }
        let c = ConfigLink { ab, ba, mss: s.tcp.segment_size, ngwa: s.ngwa.clone() };
        if let Some(n) = &c.ngwa {
            check_ngwa(n, &|field, m| s.error(&format!("ngwa.{field}"), m.to_string()).to_string())?;
        }
        Ok(c)
    }
}

/// What the real gateway cannot honour of an `[ngwa]` table; `err(field,
/// message)` names where it came from.
fn check_ngwa(n: &NgwaSpec, err: &dyn Fn(&str, &str) -> String) -> Result<(), String> {
    n.validate().map_err(|(f, m)| err(f.trim_start_matches("ngwa."), &m))?;
    let Some(m) = n.switches() else { return Ok(()) };
    if !m.cw {
        return Err(err(
            if n.cw == netreturn_scenario::ngwa::Switch::Off { "cw" } else { "mode" },
            &format!(
                "mode {} without CW asks the senders for standard TCP (RFC 793), which real Linux senders are not; \
                 allowed: modes 1, 2, 5, 6 (or cw = true)",
                n.mode
            ),
        ));
    }
    if n.option_bytes != netreturn_wire::ipv4::NGWA_INSERT_LEN as u32 {
        return Err(err(
            "option_bytes",
            &format!("{}: the real gateway writes the option in 8 bytes (6 and two NOPs); allowed: 8", n.option_bytes),
        ));
    }
    Ok(())
}

/// `[ngwa]` from `--ngwa KEY=VALUE` pairs, read by the scenario's serde type.
fn ngwa_from_flags(pairs: &[(String, String)]) -> Result<NgwaSpec, String> {
    let mut t = toml::Table::new();
    for (k, v) in pairs {
        if k == "routers" {
            return Err("--ngwa routers: names simulated interfaces; a real gateway is told its role with --ngwa role=router|receiver-edge|both".into());
        }
        t.insert(k.clone(), parse_override(v));
    }
    let n = toml::Value::Table(t).try_into::<NgwaSpec>().map_err(|e| {
        let keys = netreturn_control::registry::struct_fields::<NgwaSpec>();
        let allowed: Vec<&str> = keys.iter().copied().filter(|k| *k != "routers").collect();
        format!("--ngwa: {} (allowed keys: {})", e.message(), allowed.join(", "))
    })?;
    check_ngwa(&n, &|field, m| format!("--ngwa {field}: {m}"))?;
    Ok(n)
}

impl Args {
    pub fn parse(argv: &[String]) -> Result<Args, String> {
        let mut a = Args {
            iface_a: String::new(),
            iface_b: String::new(),
            rate: None,
            rate_ba: None,
            delay: Time::ZERO,
            delay_ba: Time::ZERO,
            jitter: Time::ZERO,
            jitter_ba: Time::ZERO,
            jitter_reorder: false,
            queue: QueueSpec::default_droptail(),
            queue_ba: QueueSpec::default_droptail(),
            loss: 0.0,
            loss_ba: 0.0,
            controller: None,
            gateway: GatewayParams::default(),
            gateway_ba: None,
            gateway_ab: None,
            packet_bytes: 1500,
            ctl_buffer: None,
            ctl_capacity: None,
            max_flows: None,
            idle_timeout: None,
            ngwa: None,
            mtu: 1500,
            mss: 1460,
            seed: 1,
            stats_file: None,
            duration: None,
            max_frame: crate::pipeline::DEFAULT_MAX_FRAME,
            spin: Time::from_micros(50),
            idle_spin: Time::ZERO,
            batch: 64,
            io: Io::Ring,
            ring_frames: 4096,
            tx_ring_frames: 512,
            check: false,
            datapath: Datapath::Packet,
            tick: Time::from_millis(1),
            tick_idle: Time::from_millis(16),
            prog_stats: false,
            delay_elsewhere: false,
        };
        let (mut rate_ba, mut delay_ba, mut queue_ba, mut jitter_ba) = (None, None, None, None);
        let mut mss = None;
        let (mut config, mut sets, mut ctl, mut ngwa) = (None, Vec::new(), Vec::new(), Vec::new());
        // Flags that are shorthands for keys of a --config file.
        let mut link_flags: Vec<&str> = Vec::new();
        let mut it = argv.iter();
        while let Some(flag) = it.next() {
            if flag == "-h" || flag == "--help" {
                return Err(String::new());
            }
            let mut val = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
            if ["--rate", "--delay", "--queue", "--loss", "--controller"].contains(&flag.as_str()) {
                link_flags.push(flag);
            }
            match flag.as_str() {
                "--config" => config = Some(val()?),
                "--set" => {
                    let v = val()?;
                    let (k, x) = v.split_once('=').ok_or_else(|| format!("--set {v:?} is not NAME=VALUE"))?;
                    sets.push((k.to_string(), x.to_string()));
                }
                "--a" => a.iface_a = val()?,
                "--b" => a.iface_b = val()?,
                "--rate" => a.rate = Some(unit(flag, parse_rate(&val()?))?),
                "--rate-ba" => rate_ba = Some(unit(flag, parse_rate(&val()?))?),
                "--delay" => a.delay = unit(flag, parse_time(&val()?))?,
                "--delay-ba" => delay_ba = Some(unit(flag, parse_time(&val()?))?),
                "--jitter" => a.jitter = unit(flag, parse_time(&val()?))?,
                "--jitter-ba" => jitter_ba = Some(unit(flag, parse_time(&val()?))?),
                "--jitter-reorder" => a.jitter_reorder = true,
                "--queue" => a.queue = QueueSpec::parse(&val()?)?,
                "--queue-ba" => queue_ba = Some(QueueSpec::parse(&val()?)?),
                "--loss" => a.loss = parse_prob(&val()?)?,
                "--loss-ba" => a.loss_ba = parse_prob(&val()?)?,
                "--controller" => a.controller = parse_controller(&val()?.to_ascii_lowercase())?,
                "--ctl" => {
                    let v = val()?;
                    let (k, x) = v.split_once('=').ok_or_else(|| format!("--ctl {v:?} is not KEY=VALUE"))?;
                    match k {
                        "buffer" => {
                            let b = unit("--ctl buffer", parse_size(x))?;
                            if b.bytes(1) == 0 {
                                return Err(format!("--ctl buffer: {x:?} must be larger than zero"));
                            }
                            a.ctl_buffer = Some(b)
                        }
                        "capacity" => a.ctl_capacity = Some(unit("--ctl capacity", parse_rate(x))?),
                        "max_flows" => {
                            a.max_flows = Some(
                                x.parse::<usize>()
                                    .ok()
                                    .filter(|&n| n >= 1)
                                    .ok_or_else(|| format!("--ctl max_flows: {x:?} is not a count of at least 1"))?,
                            )
                        }
                        "idle_timeout" => a.idle_timeout = Some(unit("--ctl idle_timeout", parse_time(x))?),
                        _ => ctl.push((k.to_string(), x.to_string())),
                    }
                }
                "--ngwa" => {
                    let v = val()?;
                    let (k, x) = v.split_once('=').ok_or_else(|| format!("--ngwa {v:?} is not KEY=VALUE"))?;
                    ngwa.push((k.to_string(), x.to_string()));
                }
                "--mtu" => {
                    a.mtu = val()?
                        .parse()
                        .ok()
                        .filter(|m| (68..=65535).contains(m))
                        .ok_or("--mtu: a size in bytes, 68..65535 (RFC 791)")?
                }
                "--mss" => {
                    mss = Some(val()?.parse::<u32>().ok().filter(|m| (88..=65495).contains(m)).ok_or(
                        "--mss: the MSS of flows whose SYN had none, in bytes: 88..65495 (RFC 9293 3.7.1, RFC 879)",
                    )?)
                }
                "--seed" => a.seed = val()?.parse().map_err(|_| "bad --seed".to_string())?,
                "--stats-file" => a.stats_file = Some(val()?),
                "--duration" => a.duration = Some(unit(flag, parse_time(&val()?))?),
                "--max-frame" => {
                    a.max_frame = val()?.parse::<usize>().ok().filter(|m| (60..=65_535 + 18).contains(m)).ok_or(
                        "--max-frame: the largest frame parsed, in bytes: 60..65553 (frames above pass untouched)",
                    )?
                }
                "--spin-us" => a.spin = Time::from_micros(val()?.parse().map_err(|_| "bad --spin-us".to_string())?),
                "--idle-spin-us" => {
                    a.idle_spin = Time::from_micros(val()?.parse().map_err(|_| "bad --idle-spin-us".to_string())?)
                }
                "--batch" => a.batch = val()?.parse::<usize>().map_err(|_| "bad --batch".to_string())?.clamp(1, 1024),
                "--io" => {
                    a.io = match val()?.as_str() {
                        "ring" => Io::Ring,
                        "mmsg" => Io::Mmsg,
                        v => return Err(format!("--io: ring or mmsg, not '{v}'")),
                    }
                }
                "--ring-frames" => {
                    a.ring_frames =
                        val()?.parse::<usize>().map_err(|_| "bad --ring-frames".to_string())?.clamp(64, 1 << 20)
                }
                "--check" => a.check = true,
                "--delay-elsewhere" => a.delay_elsewhere = true,
                "--datapath" => {
                    a.datapath = match val()?.as_str() {
                        "packet" => Datapath::Packet,
                        "kernel" => Datapath::Kernel,
                        v => return Err(format!("--datapath: packet or kernel, not {v:?}")),
                    }
                }
                "--tick" => {
                    a.tick = unit(flag, parse_time(&val()?))?;
                    if a.tick < Time::from_micros(100) || a.tick > Time::from_secs(1) {
                        return Err(format!("--tick: {} is outside 100us..1s", a.tick));
                    }
                }
                "--prog-stats" => a.prog_stats = true,
                "--tick-idle" => {
                    a.tick_idle = unit(flag, parse_time(&val()?))?;
                    if a.tick_idle > Time::from_secs(1) {
                        return Err(format!("--tick-idle: {} is above 1s", a.tick_idle));
                    }
                }
                "--tx-ring-frames" => {
                    a.tx_ring_frames =
                        val()?.parse::<usize>().map_err(|_| "bad --tx-ring-frames".to_string())?.clamp(16, 1 << 20)
                }
                other => return Err(format!("unknown flag '{other}'")),
            }
        }
        if a.iface_a.is_empty() || a.iface_b.is_empty() {
            return Err("--a and --b are required".into());
        }
        if a.delay_elsewhere && a.datapath != Datapath::Kernel {
            return Err("--delay-elsewhere: only the kernel datapath (--datapath kernel) leaves the link's delay, \
                        jitter and loss to another hop"
                .into());
        }
        if let Some(path) = &config {
            if let Some(f) = link_flags.first() {
                return Err(format!(
                    "{f} sets a key of --config {path}; change the file (or --set its [params]) instead"
                ));
            }
            let c = ConfigLink::load(path, &sets)?;
            // Both directions as the simulator runs them (one resolved model).
            a.rate = Some(c.ab.rate);
            a.delay = c.ab.delay;
            a.loss = c.ab.loss;
            a.queue = QueueSpec::of(&c.ab);
            a.controller = c.ab.controller();
            a.gateway = GatewayParams::default();
            rate_ba = Some(c.ba.rate);
            delay_ba = Some(c.ba.delay);
            a.loss_ba = c.ba.loss;
            queue_ba = Some(QueueSpec::of(&c.ba));
            a.gateway_ba = c.ba.gateway.clone();
            a.packet_bytes = c.ab.packet_bytes;
            a.mss = c.mss;
            a.gateway_ab = c.ab.gateway.clone();
            if let Some((k, _)) = ngwa.first() {
                return Err(format!(
                    "--ngwa {k}= sets ngwa.{k} of --config {path}; change the file (or --set its [params]) instead"
                ));
            }
            a.ngwa = c.ngwa;
        } else if !sets.is_empty() {
            return Err("--set overrides the [params] of a --config file; there is none".into());
        } else if !ngwa.is_empty() {
            a.ngwa = Some(ngwa_from_flags(&ngwa)?);
        }
        // Mode 0 is NGWA off.
        a.ngwa = a.ngwa.filter(|n| n.switches().is_some());
        if let Some(m) = mss {
            a.mss = m;
        }
        let any_controller = a.controller.or(a.gateway_ba.as_ref().map(|g| g.controller.kind()));
        if let (Some(n), Some(k)) = (&a.ngwa, any_controller) {
            if n.role.edge() {
                return Err(format!(
                    "NGWA's receiver edge rewrites the ACKs' window itself; it cannot run beside controller {}; \
                     allowed with role = receiver-edge or both: no controller",
                    k.name()
                ));
            }
        }
        match a.controller {
            Some(kind) if config.is_none() => a.gateway = gateway_from_ctl(kind, &ctl)?,
            Some(kind) => {
                // --ctl keys on top of the file's table: refused, one place for each value.
                if let Some((k, _)) = ctl.first() {
                    return Err(format!(
                        "--ctl {k}= sets gateway.{}.{k} of --config; change the file instead",
                        kind.name()
                    ));
                }
            }
            None if !ctl.is_empty() => return Err(format!("--ctl {}: no --controller to take it", ctl[0].0)),
            None => {}
        }
        a.rate_ba = rate_ba.or(a.rate);
        a.delay_ba = delay_ba.unwrap_or(a.delay);
        a.jitter_ba = jitter_ba.unwrap_or(a.jitter);
        if a.jitter_reorder && a.jitter == Time::ZERO && a.jitter_ba == Time::ZERO {
            return Err("--jitter-reorder: there is no jitter to reorder by; give --jitter TIME".into());
        }
        for (f, j) in [("--jitter", a.jitter), ("--jitter-ba", a.jitter_ba)] {
            if j > Time::from_secs(1) {
                return Err(format!("{f}: {j} is more than 1 s; allowed: 0 .. 1s (a variation of the delay)"));
            }
        }
        if let Some(q) = queue_ba {
            a.queue_ba = q;
        }
        Ok(a)
    }
}

impl Args {
    /// The delay variation of A -> B and B -> A.
    pub fn jitters(&self) -> (crate::pipeline::Jitter, crate::pipeline::Jitter) {
        let j = |amount| crate::pipeline::Jitter { amount, reorder: self.jitter_reorder };
        (j(self.jitter), j(self.jitter_ba))
    }

    /// The pipeline's two directions: rate, delay, loss and queue
    /// discipline, a packet limit and RED's typical packet weighing
    /// [`Args::packet_bytes`].
    pub fn links(&self) -> Result<(crate::pipeline::LinkConfig, crate::pipeline::LinkConfig), String> {
        let ab = crate::pipeline::LinkConfig {
            rate: self.rate,
            delay: self.delay,
            loss: self.loss,
            discipline: self.queue.discipline(self.rate, self.packet_bytes)?,
            aqm: self.queue.kind.decides_at_dequeue().then(|| (self.queue.kind, self.queue.aqm.clone())),
        };
        let ba = crate::pipeline::LinkConfig {
            rate: self.rate_ba,
            delay: self.delay_ba,
            loss: self.loss_ba,
            discipline: self.queue_ba.discipline(self.rate_ba, self.packet_bytes)?,
            aqm: self.queue_ba.kind.decides_at_dequeue().then(|| (self.queue_ba.kind, self.queue_ba.aqm.clone())),
        };
        Ok((ab, ba))
    }
}

/// A unit parser's error, prefixed with the flag it came from.
fn unit<T>(flag: &str, r: Result<T, String>) -> Result<T, String> {
    r.map_err(|e| format!("{flag}: {e}"))
}

fn parse_prob(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|_| format!("bad probability '{s}'"))?;
    if !(0.0..=1.0).contains(&p) {
        return Err(format!("probability '{s}' not in [0, 1]"));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Result<Args, String> {
        Args::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn gateway_sizes_mean_what_they_mean_in_scenario_files() {
        // Once "100p" was 0 bytes here and "97KiB" 97000.
        assert_eq!(QueueSpec::parse("droptail,bytes=100p").unwrap().limit, Limit::Packets(100));
        assert_eq!(QueueSpec::parse("droptail,bytes=97KiB").unwrap().limit, Limit::Bytes(97 * 1024));
        assert!(QueueSpec::parse("droptail,bytes=-5k").is_err());
        assert!(QueueSpec::parse("droptail,bytes=29q").unwrap_err().contains("allowed: B, kB"));
        let a = args("--a x --b y --rate 2.5Gbps --delay 250us").unwrap();
        assert_eq!((a.rate, a.delay), (Some(Rate::bps(2_500_000_000)), Time::from_micros(250)));
    }

    #[test]
    fn ctl_keys_are_the_scenario_keys_and_unknown_ones_list_the_allowed() {
        let a = args("--a x --b y --controller ewa --ctl w_up=32 --ctl low=20p").unwrap();
        let netreturn_control::ControllerConfig::Ewa(c) = a.gateway.config(ControllerKind::Ewa) else { panic!() };
        assert_eq!((c.w_up, c.low_threshold), (32.0, Some(Size::Packets(20))));
        let e = args("--a x --b y --controller ewa --ctl wup=32").unwrap_err();
        assert!(e.contains("wup") && e.contains("w_up"), "{e}");
        let e = args("--a x --b y --controller ewt --ctl st=-5k").unwrap_err();
        assert!(e.contains("must not be negative"), "{e}");
        let e = args("--a x --b y --controller saplaw").unwrap_err();
        assert!(e.contains("sap-law"), "{e}");
    }

    #[test]
    fn values_outside_their_domain_are_refused_naming_the_flag_not_run_as_something_else() {
        // Issue 23: each of these was accepted, panicked or ran as another
        // gateway (--max-frame 0 turned off all parsing; a delay of 1e300 s
        // made a black hole that exits 0).
        for (flags, words) in [
            ("--max-frame 0", "--max-frame"),
            ("--mss 0", "--mss"),
            ("--controller ewt --ctl max_flows=0", "max_flows"),
            ("--controller ewt --ctl buffer=0", "--ctl buffer"),
            ("--rate 0.1bps", "rounds to zero"),
            ("--delay 1e300s", "1e9 s"),
            ("--queue red,bytes=100kB,min=50kB,max=20kB", "min_th"),
            ("--queue red,bytes=100kB,wq=2", "w_q"),
            ("--queue red,bytes=100kB,maxp=-1", "max_p"),
        ] {
            let e = args(&format!("--a x --b y {flags}")).unwrap_err();
            assert!(e.contains(words), "{flags}: {e}");
        }
    }

    #[test]
    fn the_usage_lists_every_controller_and_queue_of_the_registry() {
        let u = usage();
        for k in ControllerKind::ALL {
            assert!(u.contains(k.name()), "{}", k.name());
        }
        for q in QueueKind::ALL {
            assert!(u.contains(q.name()), "{}", q.name());
        }
        assert!(!u.contains("{controllers}") && !u.contains("{queues}"), "every placeholder filled");
    }

    #[test]
    fn an_override_with_text_after_its_value_is_not_cut_short() {
        // `--set 'queue="droptail"\nx = 1'` once read as "droptail".
        assert_eq!(parse_override("\"droptail\"\nx = 1"), toml::Value::String("\"droptail\"\nx = 1".into()));
        assert_eq!(parse_override("31"), toml::Value::Integer(31));
        assert_eq!(parse_override("red"), toml::Value::String("red".into()));
    }

    #[test]
    fn a_dequeue_time_queue_reads_its_keys_as_the_scenarios_aqm_table() {
        let q = QueueSpec::parse("fq_codel,packets=1000,ecn=false,target=2ms,flows=64").unwrap();
        let a = q.aqm.expect("an aqm table");
        assert_eq!((a.ecn, a.target, a.flows), (Some(false), Some(Time::from_millis(2)), Some(64)));
        assert!(q.red.is_none());
        let e = QueueSpec::parse("codel,packets=100,min_th=10kB").unwrap_err();
        assert!(e.contains("min_th"), "a red key is not an aqm key: {e}");
        let e = QueueSpec::parse("dualpi2,packets=100,c_protection=2").unwrap_err();
        assert!(e.contains("c_protection") && e.contains("0..=1"), "{e}");
    }

    #[test]
    fn red_keys_read_through_the_scenario_table() {
        let q = QueueSpec::parse("red,bytes=100kB,min=10kB,max_th=30kB,wq=0.004,gentle=true").unwrap();
        let r = q.red.unwrap();
        assert_eq!((r.min_th, r.max_th), (Some(Size::Bytes(10_000)), Some(Size::Bytes(30_000))));
        assert_eq!((r.w_q, r.gentle), (Some(0.004), Some(true)));
        assert!(QueueSpec::parse("red,bytes=1M,maxq=3").unwrap_err().contains("max_p"));
        // RED's marking (RFC 3168 section 5) is a key of the red table.
        let r = QueueSpec::parse("red,bytes=100kB,ecn=true,hard_drop=false").unwrap().red.unwrap();
        assert_eq!((r.ecn, r.hard_drop), (Some(true), Some(false)));
        let e = QueueSpec::parse("red,bytes=100kB,ecn=1").unwrap_err();
        assert!(e.contains("ecn") || e.contains("bool"), "{e}");
    }

    #[test]
    fn cobalt_is_a_queue_of_the_gateway_with_codels_keys() {
        let q = QueueSpec::parse("cobalt,packets=500,ecn=false,target=2ms,interval=50ms").unwrap();
        assert_eq!(q.kind, QueueKind::Cobalt);
        let a = q.aqm.expect("an aqm table");
        assert_eq!(
            (a.ecn, a.target, a.interval),
            (Some(false), Some(Time::from_millis(2)), Some(Time::from_millis(50)))
        );
    }

    #[test]
    fn reverse_direction_defaults_to_forward_settings() {
        let a = args("--a x --b y --rate 10mbit --delay 5ms --queue red,bytes=100k").unwrap();
        assert_eq!(a.rate_ba, Some(Rate::mbps(10)));
        assert_eq!(a.delay_ba, Time::from_millis(5));
        assert_eq!(a.queue.limit, Limit::Bytes(100_000));
        assert!(matches!(a.queue.discipline(a.rate, 1500), Ok(Discipline::Red(_))));
        assert_eq!(a.queue_ba.limit, Limit::Packets(100), "a scenario link's default buffer");
    }

    #[test]
    fn jitter_defaults_to_both_directions_keeps_order_and_is_refused_where_meaningless() {
        let a = args("--a x --b y --delay 70ms --jitter 3ms").unwrap();
        let (ab, ba) = a.jitters();
        assert_eq!((ab.amount, ba.amount), (Time::from_millis(3), Time::from_millis(3)));
        assert!(!ab.reorder && !ba.reorder, "FIFO unless asked");
        let a = args("--a x --b y --delay 70ms --jitter 3ms --jitter-ba 0us --jitter-reorder").unwrap();
        let (ab, ba) = a.jitters();
        assert_eq!((ab.amount, ba.amount, ab.reorder), (Time::from_millis(3), Time::ZERO, true));
        let e = args("--a x --b y --jitter-reorder").unwrap_err();
        assert!(e.contains("--jitter-reorder") && e.contains("--jitter TIME"), "{e}");
        let e = args("--a x --b y --jitter 2s").unwrap_err();
        assert!(e.starts_with("--jitter:") && e.contains("0 .. 1s"), "{e}");
        assert!(args("--a x --b y --jitter fast").unwrap_err().starts_with("--jitter:"));
        // A scenario link has no jitter key: the flag goes beside --config.
        let f = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/testbed/rwm.toml");
        let a = args(&format!("--a x --b y --config {f} --jitter 3ms")).unwrap();
        assert_eq!(a.jitters().0.amount, Time::from_millis(3));
    }

    #[test]
    fn missing_interfaces_and_bad_flags_are_refused() {
        assert!(args("--a x").is_err());
        assert!(args("--a x --b y --bogus 1").is_err());
        assert!(args("--a x --b y --loss 2").is_err());
        assert!(args("--a x --b y --queue fifo,bytes=1").is_err());
    }

    #[test]
    fn ngwa_flags_are_the_scenario_keys_and_what_linux_cannot_honour_is_refused() {
        let a = args("--a x --b y --ngwa mode=6 --ngwa role=receiver-edge").unwrap();
        let n = a.ngwa.unwrap();
        assert_eq!(n.role, netreturn_scenario::ngwa::Role::ReceiverEdge);
        assert!(n.switches().unwrap().se && n.switches().unwrap().fd);
        assert!(args("--a x --b y --ngwa mode=0").unwrap().ngwa.is_none(), "mode 0 is off");
        let e = args("--a x --b y --ngwa mode=3").unwrap_err();
        assert!(e.starts_with("--ngwa mode:") && e.contains("1, 2, 5, 6"), "{e}");
        let e = args("--a x --b y --ngwa mode=1 --ngwa role=edge").unwrap_err();
        assert!(e.contains("receiver-edge"), "{e}");
        let e = args("--a x --b y --ngwa mode=1 --ngwa rol=router").unwrap_err();
        assert!(e.contains("allowed keys:") && e.contains("role"), "{e}");
        assert!(args("--a x --b y --ngwa mode=1 --ngwa routers=[]").unwrap_err().contains("role="));
        assert!(args("--a x --b y --ngwa mode=1 --ngwa role=both --controller ewt").is_err());
        assert!(args("--a x --b y --ngwa mode=1 --controller ewt").is_ok(), "a router beside a controller");
        assert!(args("--a x --b y --mtu 40").is_err());
    }

    #[test]
    fn a_scenario_files_ngwa_table_sets_the_gateways_ngwa_and_errors_name_file_and_field() {
        let f = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/ngwa/rate.toml");
        let a = args(&format!("--a x --b y --config {f} --set ngwa_mode=5")).unwrap();
        let n = a.ngwa.unwrap();
        assert_eq!((n.mode, n.role), (5, netreturn_scenario::ngwa::Role::Router));
        let e = args(&format!("--a x --b y --config {f} --set ngwa_mode=7")).unwrap_err();
        assert!(e.contains("rate.toml") && e.contains("`ngwa.mode`") && e.contains("mode 7"), "{e}");
        let e = args(&format!("--a x --b y --config {f} --set ngwa_mode=5 --ngwa role=both")).unwrap_err();
        assert!(e.contains("change the file"), "{e}");
    }
}
