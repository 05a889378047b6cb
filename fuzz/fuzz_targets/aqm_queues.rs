//! Arbitrary enqueue / dequeue sequences through each dequeue-time queue
//! (`QueueKind::ALL` with `decides_at_dequeue`: CoDel, FQ-CoDel, PIE,
//! FQ-PIE, DualPI2, COBALT), built as the simulator and the gateway build
//! them (`QueueKind::aqm` over a link's `aqm` table), with arbitrary times,
//! sizes, flows, ECN fields, limits and table values (those `AqmParams::
//! check` accepts).
//!
//! Checked after every call and at the end:
//! * conservation: packets offered = sent + dropped + still queued; each
//!   packet leaves once (sent or dropped, never both, never twice), and
//!   `enqueue`'s answer says whether the arrival is still queued;
//! * the queue's byte and packet backlog equal the sums over the packets
//!   still queued, and `oldest` is the earliest arrival among them;
//! * a packet leaves with its size, flow and arrival time; a mark only on
//!   an ECN-capable packet (RFC 3168 section 5): a Not-ECT packet is never
//!   marked and leaves Not-ECT, a marked one leaves CE, and one not marked
//!   leaves with the ECN field it came with;
//! * draining: with time moving on, the queue empties (no packet is stuck)
//!   and no call panics.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use netreturn_base::{Ecn, Rng, Size, Time};
use netreturn_control::queue::aqm::{AqmParams, Meta};
use netreturn_control::queue::{DropReason, Limit};
use netreturn_control::QueueKind;
use std::collections::BTreeMap;

const MAX_OPS: usize = 2048;

#[derive(Arbitrary, Debug)]
enum Op {
    /// A packet arrives `dt` ns after the previous call.
    Enqueue { dt: u16, size: u16, flow: u8, ecn: u8 },
    /// The link frees `dt` us after the previous call.
    Dequeue { dt: u16 },
    /// Time passes: `dt` x 100 ms.
    Idle { dt: u8 },
}

#[derive(Arbitrary, Debug)]
struct Params {
    ecn: Option<bool>,
    target_us: Option<u32>,
    interval_us: Option<u32>,
    t_update_us: Option<u32>,
    alpha: Option<u8>,
    beta: Option<u8>,
    max_burst_ms: Option<u16>,
    flows: Option<u8>,
    quantum: Option<u16>,
    k: Option<u8>,
    step_us: Option<u16>,
    c_protection: Option<u8>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    kind: u8,
    limit_packets: bool,
    limit: u16,
    salt: u64,
    seed: u64,
    params: Params,
    ops: Vec<Op>,
}

fn ecn_of(b: u8) -> Ecn {
    match b % 4 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// What the test knows of a packet still in the queue.
#[derive(Clone, Copy, Debug)]
struct Held {
    size: u32,
    flow: u64,
    ecn: Ecn,
    at: Time,
}

struct Book {
    offered: u64,
    sent: u64,
    dropped: u64,
    held: BTreeMap<u64, Held>,
}

impl Book {
    /// A packet the queue dropped (on arrival or from a head).
    fn drop(&mut self, id: u64, meta: &Meta, _why: DropReason) {
        let h = self.held.remove(&id).unwrap_or_else(|| panic!("packet {id} dropped but not held"));
        assert_eq!(meta.size, h.size, "packet {id}'s size changed");
        assert!(!meta.marked || h.ecn.is_capable(), "packet {id} marked though Not-ECT");
        self.dropped += 1;
    }

    /// A packet the queue sent.
    fn sent(&mut self, id: u64, meta: &Meta) {
        let h = self.held.remove(&id).unwrap_or_else(|| panic!("packet {id} sent but not held"));
        assert_eq!((meta.size, meta.flow, meta.enqueued), (h.size, h.flow, h.at), "packet {id} changed");
        if meta.marked {
            assert!(h.ecn.is_capable() && h.ecn != Ecn::Ce, "packet {id} marked from {:?}", h.ecn);
            assert_eq!(meta.ecn, Ecn::Ce);
        } else if h.ecn == Ecn::NotEct {
            assert_eq!(meta.ecn, Ecn::NotEct, "packet {id}: a Not-ECT packet left {:?}", meta.ecn);
        } else {
            assert_eq!(meta.ecn, h.ecn, "packet {id}'s ECN changed without a mark");
        }
        self.sent += 1;
    }
}

fn params(p: &Params) -> AqmParams {
    AqmParams {
        ecn: p.ecn,
        target: p.target_us.map(|u| Time::from_micros(u as u64)),
        interval: p.interval_us.map(|u| Time::from_micros(u as u64)),
        // PIE and PI2 run every update due, as a timer would: at least 1 ms
        // apart here, so that an input's hours of idle time cost seconds at
        // most (a 1 us update over 50 000 s would be 5e10 updates).
        t_update: p.t_update_us.map(|u| Time::from_micros(u.max(1_000) as u64)),
        alpha: p.alpha.map(|a| a as f64 / 16.0),
        beta: p.beta.map(|b| b as f64 / 16.0),
        max_burst: p.max_burst_ms.map(|m| Time::from_millis(m as u64)),
        flows: p.flows.map(|f| f as u32),
        quantum: p.quantum.map(|q| Size::Bytes(q as u64)),
        k: p.k.map(|k| k as f64 / 8.0),
        step: p.step_us.map(|s| Time::from_micros(s as u64)),
        c_protection: p.c_protection.map(|c| c as f64 / 255.0),
    }
}

fuzz_target!(|input: Input| {
    let kinds: Vec<QueueKind> = QueueKind::ALL.iter().copied().filter(|q| q.decides_at_dequeue()).collect();
    let kind = kinds[input.kind as usize % kinds.len()];
    let table = params(&input.params);
    if table.check().is_err() {
        return; // the scenario loader refuses these (QueueKind::check)
    }
    let limit =
        if input.limit_packets { Limit::Packets(input.limit as u32) } else { Limit::Bytes(input.limit as u64 * 16) };
    let mut q = kind.aqm::<u64>(limit, input.salt, Some(&table)).expect("a dequeue-time kind");
    let mut rng = Rng::new(input.seed);
    let mut book = Book { offered: 0, sent: 0, dropped: 0, held: BTreeMap::new() };
    let mut now = Time::ZERO;

    let check = |q: &netreturn_control::queue::aqm::Aqm<u64>, book: &Book, now: Time| {
        assert_eq!(book.offered, book.sent + book.dropped + book.held.len() as u64, "conservation");
        let b = q.backlog();
        assert_eq!(b.packets as usize, book.held.len(), "{kind:?}: packet backlog");
        assert_eq!(b.bytes, book.held.values().map(|h| h.size as u64).sum::<u64>(), "{kind:?}: byte backlog");
        let oldest = book.held.values().map(|h| h.at).min();
        assert_eq!(q.oldest(), oldest, "{kind:?}: oldest");
        assert!(oldest.is_none_or(|t| t <= now));
    };

    for (id, op) in input.ops.iter().take(MAX_OPS).enumerate() {
        let id = id as u64;
        match *op {
            Op::Enqueue { dt, size, flow, ecn } => {
                now += Time::from_nanos(dt as u64);
                let ecn = ecn_of(ecn);
                let size = size as u32;
                book.offered += 1;
                book.held.insert(id, Held { size, flow: flow as u64, ecn, at: now });
                let meta = Meta::new(size, flow as u64, ecn);
                let mut drops = vec![];
                let queued = q.enqueue(now, id, meta, &mut rng, &mut |i, m, why| drops.push((i, m, why)));
                for (i, m, why) in drops {
                    book.drop(i, &m, why);
                }
                assert_eq!(queued, book.held.contains_key(&id), "{kind:?}: enqueue's answer");
            }
            Op::Dequeue { dt } => {
                now += Time::from_micros(dt as u64);
                let mut drops = vec![];
                let sent = q.dequeue(now, &mut rng, &mut |i, m, why| drops.push((i, m, why)));
                for (i, m, why) in drops {
                    book.drop(i, &m, why);
                }
                if let Some(d) = sent {
                    book.sent(d.item, &d.meta);
                } else {
                    assert!(book.held.is_empty(), "{kind:?}: nothing sent with packets queued");
                }
            }
            Op::Idle { dt } => now += Time::from_millis(100 * dt as u64),
        }
        check(&q, &book, now);
    }
    // Drain: one packet per ms until the queue gives nothing.
    let mut rounds = 0;
    loop {
        now += Time::from_millis(1);
        let mut drops = vec![];
        let sent = q.dequeue(now, &mut rng, &mut |i, m, why| drops.push((i, m, why)));
        for (i, m, why) in drops {
            book.drop(i, &m, why);
        }
        let Some(d) = sent else { break };
        book.sent(d.item, &d.meta);
        check(&q, &book, now);
        rounds += 1;
        assert!(rounds <= MAX_OPS, "{kind:?}: the drain does not end");
    }
    assert!(book.held.is_empty(), "{kind:?}: {} packets stuck", book.held.len());
    check(&q, &book, now);
});
