//! Interfaces whose queue decides at dequeue (CoDel, FQ-CoDel, PIE, FQ-PIE,
//! DualPI2: [`netreturn_control::queue::aqm`]). Their packets' departures
//! are not known on admission, so the link asks the queue for its next
//! packet each time it frees ([`Event::LinkFree`]), where a FIFO interface
//! fixes the departure when it admits the packet ([`World::enqueue`]).
//! Out of line: a run without such a queue pays one flag test per hop.

use super::*;
use netreturn_base::Ecn;
use netreturn_control::queue::aqm::{Aqm, Meta};
use netreturn_control::QueueEventKind;
use std::collections::VecDeque;

/// A dequeue-time queue holding packet ids, and the drops of the call in
/// progress (kept to avoid an allocation per call).
pub struct AqmLink {
    pub queue: Aqm<u32>,
    dropped: Vec<(u32, DropReason)>,
    /// Packets the queue let go that wait in the device for the link (ns-3's
    /// device queue under a queue disc), at most `device_cap`.
    device: VecDeque<u32>,
    /// The device queue's size in packets (the `aqm` table's
    /// `device_queue`; 0: the queue is asked as the link frees).
    pub device_cap: u32,
}

/// The flow key a dequeue-time queue sees for a packet (FQ hashes it into a
/// bucket): its flow's index, UDP or TCP, and its direction.
fn aqm_flow_key(flow: u32, udp: bool, dir: u8) -> u64 {
    ((flow as u64) << 2) | ((udp as u64) << 1) | dir as u64
}

/// [`aqm_flow_key`] taken apart, for traces: (the flow's index, UDP, the
/// direction, 1 for the reverse one).
pub fn aqm_flow_parts(key: u64) -> (u64, bool, u64) {
    (key >> 2, (key >> 1) & 1 == 1, key & 1)
}

impl AqmLink {
    pub fn new(queue: Aqm<u32>) -> AqmLink {
        AqmLink { queue, dropped: vec![], device: VecDeque::new(), device_cap: 0 }
    }
}

impl World {
    /// [`World::enqueue`] for an interface with a dequeue-time queue.
    #[inline(never)]
    pub(super) fn enqueue_aqm(&mut self, out: u32, pi: u32) {
        let now = self.now;
        if self.ifaces[out as usize].gateway.is_some() {
            self.gateway_sees_data(out, pi);
        }
        let p = &self.pool.slots[pi as usize];
        // A flow's packets in one direction share a key (RFC 8290 section
        // 4.1.1 hashes the 5-tuple). TCP segments carry the ECN field their
        // sender set; UDP sources are not ECN-capable.
        let ecn = if p.udp { Ecn::NotEct } else { p.seg.ecn };
        let meta = Meta::new(p.size, aqm_flow_key(p.flow, p.udp, p.dir), ecn);
        let iface = &mut self.ifaces[out as usize];
        let link = iface.aqm.as_deref_mut().expect("an AQM interface");
        let AqmLink { queue, dropped, .. } = link;
        let accepted = queue.enqueue(now, pi, meta, &mut iface.rng, &mut |id, _, why| dropped.push((id, why)));
        let backlog = queue.backlog();
        self.book_aqm_drops(out);
        let (hop, iface) = (&mut self.hops[out as usize], &mut self.ifaces[out as usize]);
        if accepted {
            let ev = QueueEvent {
                kind: QueueEventKind::Enqueue,
                size: meta.size,
                backlog_bytes: backlog.bytes,
                backlog_packets: backlog.packets,
            };
            if let Some(gw) = iface.gateway.as_mut() {
                gw.on_queue(now, &ev);
            }
            hop.account_backlog(&mut iface.stats, now, backlog.bytes);
        }
        if hop.busy_until <= now {
            self.link_free(out);
        } else {
            self.fill_device(out);
        }
    }

    /// Interface `i`'s link is free at `now`: its queue chooses the next
    /// packet, which starts at once; the link asks again when it is out.
    pub(super) fn link_free(&mut self, i: u32) {
        let now = self.now;
        if self.hops[i as usize].busy_until > now {
            return;
        }
        // A packet waiting in the device goes first; else the queue is asked.
        let waiting = self.ifaces[i as usize].aqm.as_deref_mut().expect("an AQM interface").device.pop_front();
        if let Some(pi) = waiting {
            // Counted as sent now that it starts (`fill_device`).
            let hop = &mut self.hops[i as usize];
            hop.tx_bytes += self.pool.slots[pi as usize].size as u64;
            hop.tx_packets += 1;
        }
        let Some(pi) = waiting.or_else(|| self.dequeue_aqm(i)) else { return };
        self.transmit(i, pi, now);
        let done = self.hops[i as usize].busy_until;
        self.events.schedule(done, Event::LinkFree(i));
        self.fill_device(i);
    }

    /// With a device queue (`device_queue` > 0), the queue hands the device
    /// packets while it has room, as ns-3's queue disc does each time its
    /// device queue wakes (`QueueDisc::Run` from `NetDeviceQueue::Wake`, as
    /// the previous packet starts on the link): the AQM judges each packet
    /// that much earlier. Without one, nothing.
    fn fill_device(&mut self, i: u32) {
        loop {
            let link = self.ifaces[i as usize].aqm.as_deref().expect("an AQM interface");
            if link.device.len() >= link.device_cap as usize {
                return;
            }
            let Some(pi) = self.dequeue_aqm(i) else { return };
            self.ifaces[i as usize].aqm.as_deref_mut().expect("an AQM interface").device.push_back(pi);
            // Left the queue (`departed`), but sent only when it starts.
            let hop = &mut self.hops[i as usize];
            hop.tx_bytes -= self.pool.slots[pi as usize].size as u64;
            hop.tx_packets -= 1;
        }
    }

    /// The queue of interface `i` gives up its next packet (marked if its
    /// AQM marked it), or `None` when it holds none.
    fn dequeue_aqm(&mut self, i: u32) -> Option<u32> {
        let now = self.now;
        let iface = &mut self.ifaces[i as usize];
        let link = iface.aqm.as_deref_mut().expect("an AQM interface");
        let AqmLink { queue, dropped, .. } = link;
        let sent = queue.dequeue(now, &mut iface.rng, &mut |id, _, why| dropped.push((id, why)));
        let backlog = queue.backlog();
        self.book_aqm_drops(i);
        let Some(dep) = sent else {
            self.hops[i as usize].account_backlog(&mut self.ifaces[i as usize].stats, now, backlog.bytes);
            return None;
        };
        let ev = QueueEvent {
            kind: QueueEventKind::Dequeue,
            size: dep.meta.size,
            backlog_bytes: backlog.bytes,
            backlog_packets: backlog.packets,
        };
        self.hops[i as usize].departed(&mut self.ifaces[i as usize], now, &ev);
        if dep.meta.marked {
            self.mark_ce(i, dep.item);
        }
        Some(dep.item)
    }

    /// Interface `i`'s queue marked packet `pi` CE instead of dropping it
    /// (RFC 3168 section 5); a packet already CE is not counted again.
    #[inline(never)]
    pub(super) fn mark_ce(&mut self, i: u32, pi: u32) {
        let seg = &mut self.pool.slots[pi as usize].seg;
        if seg.ecn != Ecn::Ce {
            seg.ecn = Ecn::Ce;
            self.ifaces[i as usize].stats.ecn_marks += 1;
        }
    }

    /// Accounts the packets the queue of interface `i` dropped in the call
    /// just made (the arrival, or packets taken from a head).
    fn book_aqm_drops(&mut self, i: u32) {
        let now = self.now;
        let mut dropped = std::mem::take(&mut self.ifaces[i as usize].aqm.as_deref_mut().expect("an AQM").dropped);
        for &(pi, why) in &dropped {
            let iface = &mut self.ifaces[i as usize];
            iface.stats.count_queue_drop(why);
            let backlog = iface.aqm.as_ref().expect("an AQM").queue.backlog();
            if let Some(gw) = iface.gateway.as_mut() {
                let size = self.pool.slots[pi as usize].size;
                let ev = QueueEvent {
                    kind: QueueEventKind::Drop,
                    size,
                    backlog_bytes: backlog.bytes,
                    backlog_packets: backlog.packets,
                };
                gw.on_queue(now, &ev);
            }
            self.drop_packet(pi, i);
        }
        dropped.clear();
        self.ifaces[i as usize].aqm.as_deref_mut().expect("an AQM").dropped = dropped;
    }
}
