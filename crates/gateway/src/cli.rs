//! Command line of `netreturn-gateway` (hand-written: a dozen flags do not
//! justify a parser dependency and its build time).

use netreturn_base::{Rate, Time};
use netreturn_control::queue::{AdaptiveRed, AdaptiveRedConfig, Discipline, DropTail, Limit, Red, RedConfig};

pub const USAGE: &str = "\
netreturn-gateway: transparent layer-2 bridge with link emulation and window control

USAGE: netreturn-gateway --a IFACE --b IFACE [options]

  --a IFACE            interface on the data senders' side (data flows A -> B)
  --b IFACE            interface on the receivers' side (ACKs flow B -> A)
  --rate RATE          line rate A -> B, e.g. 100mbit, 1gbit, 2.5g (default: unlimited)
  --rate-ba RATE       line rate B -> A (default: same as --rate)
  --delay TIME         one-way delay A -> B, e.g. 10ms, 250us (default 0)
  --delay-ba TIME      one-way delay B -> A (default: same as --delay)
  --queue SPEC         A -> B queue: droptail,bytes=N | droptail,packets=N |
                       red,bytes=N[,min=N,max=N,wq=X,maxp=X] | ared,bytes=N[,...]
                       (default droptail,packets=1000)
  --queue-ba SPEC      B -> A queue (default droptail,packets=1000)
  --loss P             Bernoulli loss probability A -> B (default 0)
  --loss-ba P          Bernoulli loss probability B -> A (default 0)
  --controller NAME    none | ewt | ewa | awm | saplaw | rwm (default none:
                       link emulator mode)
  --ctl KEY=VALUE      controller parameter (repeatable; see docs/gateway.md)
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

Signals: SIGUSR1 prints the counters to stderr; SIGINT/SIGTERM stop and print
them as JSON on stdout.
";

/// A parsed command line.
#[derive(Clone, Debug)]
pub struct Args {
    pub iface_a: String,
    pub iface_b: String,
    pub rate: Option<Rate>,
    pub rate_ba: Option<Rate>,
    pub delay: Time,
    pub delay_ba: Time,
    pub queue: QueueSpec,
    pub queue_ba: QueueSpec,
    pub loss: f64,
    pub loss_ba: f64,
    pub controller: String,
    pub ctl: Vec<(String, String)>,
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
}

/// How frames move between the interfaces and the bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    /// `PACKET_MMAP` receive and transmit rings.
    Ring,
    /// `recvmmsg` / `sendmmsg`.
    Mmsg,
}

/// A queue discipline as written on the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSpec {
    pub kind: String,
    pub limit: Limit,
    pub params: Vec<(String, String)>,
}

impl QueueSpec {
    pub fn parse(s: &str) -> Result<QueueSpec, String> {
        let mut parts = s.split(',');
        let kind = parts.next().unwrap_or("").to_string();
        if !["droptail", "red", "ared"].contains(&kind.as_str()) {
            return Err(format!("unknown queue '{kind}' (droptail, red, ared)"));
        }
        let mut limit = None;
        let mut params = Vec::new();
        for p in parts {
            let (k, v) = p.split_once('=').ok_or_else(|| format!("queue parameter '{p}' is not KEY=VALUE"))?;
            match k {
                "bytes" => limit = Some(Limit::Bytes(parse_size(v)?)),
                "packets" => limit = Some(Limit::Packets(v.parse().map_err(|_| format!("bad packets '{v}'"))?)),
                "min" | "max" | "wq" | "maxp" | "gentle" => params.push((k.to_string(), v.to_string())),
                _ => return Err(format!("unknown queue parameter '{k}'")),
            }
        }
        let limit = limit.ok_or_else(|| format!("queue '{s}' needs bytes=N or packets=N"))?;
        Ok(QueueSpec { kind, limit, params })
    }

    /// The discipline, given the egress rate (RED's idle decay needs the
    /// transmission time of a typical packet) and the typical packet size.
    pub fn discipline(&self, rate: Option<Rate>, mean_packet: u32) -> Result<Discipline, String> {
        if self.kind == "droptail" {
            return Ok(Discipline::DropTail(DropTail::new(self.limit)));
        }
        let b = self.limit.bytes(mean_packet);
        // Without a rate there is no idle decay to model; 1 Gb/s stands in.
        let idle = rate.unwrap_or(Rate::mbps(1000)).tx_time(mean_packet as u64);
        let mut red = RedConfig::linux_like(b, mean_packet, idle);
        red.limit = self.limit;
        for (k, v) in &self.params {
            let f = || v.parse::<f64>().map_err(|_| format!("bad {k} '{v}'"));
            match k.as_str() {
                "min" => red.min_th = parse_size(v)?,
                "max" => red.max_th = parse_size(v)?,
                "wq" => red.w_q = f()?,
                "maxp" => red.max_p = f()?,
                "gentle" => red.gentle = v == "1" || v == "true",
                _ => unreachable!(),
            }
        }
        Ok(match self.kind.as_str() {
            "red" => Discipline::Red(Red::new(red)),
            _ => Discipline::AdaptiveRed(AdaptiveRed::new(AdaptiveRedConfig::recommended(red))),
        })
    }
}

/// `1500`, `100k`, `100kB`, `1.5M`, `2MB` (decimal multiples), bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().trim_end_matches(['B', 'b']);
    let (num, mul) = split_suffix(t);
    let n: f64 = num.parse().map_err(|_| format!("bad size '{s}'"))?;
    Ok((n * mul) as u64)
}

fn split_suffix(t: &str) -> (&str, f64) {
    match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        None => (t, 1.0),
        Some((i, _)) => {
            let m = match t[i..].chars().next().unwrap().to_ascii_lowercase() {
                'k' => 1e3,
                'm' => 1e6,
                'g' => 1e9,
                't' => 1e12,
                _ => f64::NAN,
            };
            (&t[..i], m)
        }
    }
}

/// `100mbit`, `1gbit`, `2.5g`, `500kbps`, `1000000` (bits per second).
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("bit").trim_end_matches("bps").trim_end_matches("b/s");
    let (num, mul) = split_suffix(t);
    let n: f64 = num.parse().map_err(|_| format!("bad rate '{s}'"))?;
    if !(n * mul).is_finite() || n <= 0.0 {
        return Err(format!("bad rate '{s}'"));
    }
    Ok(Rate::bps((n * mul).round() as u64))
}

/// `10ms`, `250us`, `1.5s`, `0`, `100ns`.
pub fn parse_time(s: &str) -> Result<Time, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1e-9)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let n: f64 = num.parse().map_err(|_| format!("bad time '{s}'"))?;
    if n < 0.0 || !n.is_finite() {
        return Err(format!("bad time '{s}'"));
    }
    Ok(Time::from_secs_f64(n * scale))
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
            queue: QueueSpec::parse("droptail,packets=1000").unwrap(),
            queue_ba: QueueSpec::parse("droptail,packets=1000").unwrap(),
            loss: 0.0,
            loss_ba: 0.0,
            controller: "none".into(),
            ctl: Vec::new(),
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
        };
        let (mut rate_ba, mut delay_ba) = (None, None);
        let mut it = argv.iter();
        while let Some(flag) = it.next() {
            if flag == "-h" || flag == "--help" {
                return Err(String::new());
            }
            let mut val = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--a" => a.iface_a = val()?,
                "--b" => a.iface_b = val()?,
                "--rate" => a.rate = Some(parse_rate(&val()?)?),
                "--rate-ba" => rate_ba = Some(parse_rate(&val()?)?),
                "--delay" => a.delay = parse_time(&val()?)?,
                "--delay-ba" => delay_ba = Some(parse_time(&val()?)?),
                "--queue" => a.queue = QueueSpec::parse(&val()?)?,
                "--queue-ba" => a.queue_ba = QueueSpec::parse(&val()?)?,
                "--loss" => a.loss = parse_prob(&val()?)?,
                "--loss-ba" => a.loss_ba = parse_prob(&val()?)?,
                "--controller" => a.controller = val()?.to_ascii_lowercase(),
                "--ctl" => {
                    let v = val()?;
                    let (k, x) = v.split_once('=').ok_or_else(|| format!("--ctl '{v}' is not KEY=VALUE"))?;
                    a.ctl.push((k.to_string(), x.to_string()));
                }
                "--mss" => a.mss = val()?.parse().map_err(|_| "bad --mss".to_string())?,
                "--seed" => a.seed = val()?.parse().map_err(|_| "bad --seed".to_string())?,
                "--stats-file" => a.stats_file = Some(val()?),
                "--duration" => a.duration = Some(parse_time(&val()?)?),
                "--max-frame" => a.max_frame = val()?.parse().map_err(|_| "bad --max-frame".to_string())?,
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
        a.rate_ba = rate_ba.or(a.rate);
        a.delay_ba = delay_ba.unwrap_or(a.delay);
        Ok(a)
    }
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
    fn units_parse() {
        assert_eq!(parse_rate("100mbit"), Ok(Rate::mbps(100)));
        assert_eq!(parse_rate("2.5g"), Ok(Rate::bps(2_500_000_000)));
        assert_eq!(parse_rate("1Gbit"), Ok(Rate::mbps(1000)));
        assert_eq!(parse_time("10ms"), Ok(Time::from_millis(10)));
        assert_eq!(parse_time("250us"), Ok(Time::from_micros(250)));
        assert_eq!(parse_size("97kB"), Ok(97_000));
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn reverse_direction_defaults_to_forward_settings() {
        let a = args("--a x --b y --rate 10mbit --delay 5ms --queue red,bytes=100k").unwrap();
        assert_eq!(a.rate_ba, Some(Rate::mbps(10)));
        assert_eq!(a.delay_ba, Time::from_millis(5));
        assert_eq!(a.queue.limit, Limit::Bytes(100_000));
        assert!(matches!(a.queue.discipline(a.rate, 1500), Ok(Discipline::Red(_))));
        assert_eq!(a.queue_ba.limit, Limit::Packets(1000));
    }

    #[test]
    fn missing_interfaces_and_bad_flags_are_refused() {
        assert!(args("--a x").is_err());
        assert!(args("--a x --b y --bogus 1").is_err());
        assert!(args("--a x --b y --loss 2").is_err());
        assert!(args("--a x --b y --queue fifo,bytes=1").is_err());
    }
}
