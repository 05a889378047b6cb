//! NGWA in a scenario (seed 001, SPEC.md 2.6): the `[ngwa]` table, the
//! eight modes of the paper's Table 1, and what they change in a world —
//! the TCP end hosts (congestion window on or off, the receiver rule with
//! or without smoothing) and the routers (every router egress gets
//! [`NgwaRouter`], with or without flow division).
//!
//! Everything NGWA reads from a scenario file is parsed here, in one place,
//! so the scenario vocabulary can take it over unchanged.
//!
//! ```toml
//! [ngwa]
//! mode = 6            # 0: off; 1..8: seed 001 Table 1 (SPEC.md 2.6)
//! se = "mode"         # or true / false: override the mode's switch
//! wmax = "64kB"       # Wmax of eq. 2
//! alpha = 0.3         # a of eq. 4
//! role = "router"     # what a real gateway reading this file does
//! ```

use netreturn_base::Time;
use netreturn_control::ngwa::{NgwaRouter, NgwaRouterConfig};
use netreturn_tcp::{CcKind, NgwaConfig, TcpConfig};
use serde::Deserialize;

use netreturn_base::units::{Size, SizeQ, TimeQ};

/// One of a mode's three switches, or the mode's own setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Switch {
    #[default]
    Mode,
    On,
    Off,
}

impl<'de> Deserialize<'de> for Switch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Switch, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            B(bool),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::B(true) => Ok(Switch::On),
            Raw::B(false) => Ok(Switch::Off),
            Raw::S(s) if s == "mode" => Ok(Switch::Mode),
            Raw::S(s) => Err(serde::de::Error::custom(format!("{s:?}: expected true, false or \"mode\""))),
        }
    }
}

impl Switch {
    fn or(self, from_mode: bool) -> bool {
        match self {
            Switch::Mode => from_mode,
            Switch::On => true,
            Switch::Off => false,
        }
    }
}

/// What a real gateway (`netreturn-gateway --config`) does for NGWA. The
/// simulator reads no role: its routers are `routers`, and its receivers
/// run the receiver rule themselves (a simulated end host can be patched).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Marks the data it forwards with its queue's free space (seed 001
    /// section 4.1) and clamps the MSS of SYNs (section 4.2).
    #[default]
    Router,
    /// The receiver rule at the receiver's edge (SPEC.md 2.6): reads the
    /// option, rewrites the ACKs going back, strips the option.
    ReceiverEdge,
    /// Both, the router step first.
    Both,
}

impl Role {
    pub fn router(self) -> bool {
        matches!(self, Role::Router | Role::Both)
    }
    pub fn edge(self) -> bool {
        matches!(self, Role::ReceiverEdge | Role::Both)
    }
}

/// The `[ngwa]` table of a scenario.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NgwaSpec {
    /// 0: NGWA off (no router marks, no receiver rule); 1..=8: seed 001
    /// Table 1.
    #[serde(default)]
    pub mode: u8,
    /// CW: NewReno at the senders; off, standard TCP (RFC 793). Overrides
    /// `tcp.cc` whenever NGWA is on.
    #[serde(default)]
    pub cw: Switch,
    /// SE: the receivers smooth `Wngwa` (eq. 4).
    #[serde(default)]
    pub se: Switch,
    /// FD: the routers divide their free bytes among the flows (eq. 3).
    #[serde(default)]
    pub fd: Switch,
    /// `Wmax` of eq. 2 (64 kB in the paper's simulations).
    #[serde(default = "default_wmax")]
    pub wmax: SizeQ,
    /// `a` of eq. 4 (0.3 in the paper).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Bytes of the IPv4 option (6, padded to 8: RFC 791).
    #[serde(default = "default_option_bytes")]
    pub option_bytes: u32,
    /// Interfaces ("R1->R2") that mark; default: every egress of every
    /// router (a node that forwards: more than one link), both directions.
    #[serde(default)]
    pub routers: Option<Vec<String>>,
    /// A router forgets a connection silent this long (FD's flow count).
    #[serde(default = "default_idle")]
    pub idle_timeout: TimeQ,
    /// Where a simulated router marks: unset, as a segment leaves the queue
    /// with the queue of that instant (the paper's qdisc, seed 001 section
    /// 3); set, as it arrives, with `W_node` from the queue as it was at the
    /// last multiple of this period. The latter is the real gateway's
    /// kernel datapath, whose programs read a `W_node` its loop writes every
    /// `--tick` (docs/gateway.md): the option measures what that costs.
    /// The real gateway ignores it (its packet datapath marks at dequeue,
    /// its kernel datapath at arrival, by construction).
    #[serde(default)]
    pub mark_tick: Option<TimeQ>,
    /// The role of a real gateway reading this file (the simulator ignores
    /// it, see [`Role`]).
    #[serde(default)]
    pub role: Role,
}

fn default_wmax() -> SizeQ {
    SizeQ(Size::Bytes(64_000))
}
fn default_alpha() -> f64 {
    0.3
}
fn default_option_bytes() -> u32 {
    8
}
fn default_idle() -> TimeQ {
    TimeQ(Time::from_secs(300))
}

/// The switches of one mode: seed 001 Table 1, read row by row (SPEC.md
/// 2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modes {
    pub cw: bool,
    pub se: bool,
    pub fd: bool,
}

impl Modes {
    /// Mode `m` (1..=8) of seed 001 Table 1.
    pub fn of(m: u8) -> Option<Modes> {
        let (cw, se, fd) = match m {
            1 => (true, false, false),
            2 => (true, true, false),
            3 => (false, false, false),
            4 => (false, true, false),
            5 => (true, false, true),
            6 => (true, true, true),
            7 => (false, false, true),
            8 => (false, true, true),
            _ => return None,
        };
        Some(Modes { cw, se, fd })
    }
}

impl NgwaSpec {
    /// The switches in force, `None` when NGWA is off.
    pub fn switches(&self) -> Option<Modes> {
        let m = Modes::of(self.mode)?;
        Some(Modes { cw: self.cw.or(m.cw), se: self.se.or(m.se), fd: self.fd.or(m.fd) })
    }

    /// Checks serde cannot express; errors as (field, message).
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.mode > 8 {
            return Err((
                "ngwa.mode".into(),
                format!("{} is not a mode: 0 (off) or 1..8 (the NGWA paper's Table 1)", self.mode),
            ));
        }
        if let Some(t) = self.mark_tick {
            if t.0 == Time::ZERO {
                return Err((
                    "ngwa.mark_tick".into(),
                    "must be longer than 0 s (leave it out to mark as segments leave the queue)".into(),
                ));
            }
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(("ngwa.alpha".into(), format!("{} is outside 0 < a < 1 (the NGWA paper's eq. 4)", self.alpha)));
        }
        Ok(())
    }

    /// The end hosts' settings: CW picks NewReno or standard TCP (seed 001
    /// section 2.1, eq. 1); the receiver rule with Wmax and SE (eq. 2, 4).
    pub fn apply_to_tcp(&self, cfg: &mut TcpConfig, packet: u32) {
        let Some(m) = self.switches() else { return };
        cfg.cc = if m.cw { CcKind::NewReno(Default::default()) } else { CcKind::None(Default::default()) };
        cfg.ngwa = self.receiver(packet);
    }

    /// The receiver rule's settings (Wmax, SE's `a`, the option's bytes),
    /// `None` when NGWA is off: the simulated receivers' and the real
    /// receiver edge's.
    pub fn receiver(&self, packet: u32) -> Option<NgwaConfig> {
        let m = self.switches()?;
        Some(NgwaConfig {
            wmax: self.wmax.0.bytes(packet),
            smoothing: m.se.then_some(self.alpha),
            option_bytes: self.option_bytes,
        })
    }

    /// A router stage for one marking interface.
    pub fn router(&self) -> Option<NgwaRouter> {
        let m = self.switches()?;
        Some(NgwaRouter::new(NgwaRouterConfig {
            flow_division: m.fd,
            idle_timeout: self.idle_timeout.0,
            ..Default::default()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml_text: &str) -> NgwaSpec {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn each_mode_has_the_switches_of_table_1() {
        // Seed 001 Table 1 as SPEC.md 2.6 reads it; modes 1/2/5/6 are the
        // Linux experiment's basic, SE, FD and SE+FD.
        let want = [
            (1, true, false, false),
            (2, true, true, false),
            (3, false, false, false),
            (4, false, true, false),
            (5, true, false, true),
            (6, true, true, true),
            (7, false, false, true),
            (8, false, true, true),
        ];
        for (m, cw, se, fd) in want {
            assert_eq!(spec(&format!("mode = {m}")).switches(), Some(Modes { cw, se, fd }), "mode {m}");
        }
        assert_eq!(spec("").switches(), None, "mode 0 is NGWA off");
        assert!(spec("mode = 9").validate().is_err());
    }

    #[test]
    fn a_switch_overrides_its_mode_and_cw_picks_newreno_or_standard_tcp() {
        let s = spec("mode = 1\nse = true\ncw = false");
        assert_eq!(s.switches(), Some(Modes { cw: false, se: true, fd: false }));
        let mut cfg = TcpConfig::default();
        s.apply_to_tcp(&mut cfg, 1000);
        assert_eq!(cfg.cc, CcKind::None(Default::default()));
        assert_eq!(cfg.ngwa, Some(NgwaConfig { wmax: 64_000, smoothing: Some(0.3), option_bytes: 8 }));
        let mut cfg = TcpConfig::default();
        spec("mode = 5").apply_to_tcp(&mut cfg, 1000);
        assert_eq!(cfg.cc, CcKind::NewReno(Default::default()));
        assert_eq!(cfg.ngwa.unwrap().smoothing, None);
        let mut cfg = TcpConfig::default();
        spec("mode = 0").apply_to_tcp(&mut cfg, 1000);
        assert_eq!(cfg, TcpConfig::default(), "off: nothing changes");
        assert!(toml::from_str::<NgwaSpec>("fd = \"yes\"").is_err());
    }
}
