use super::{Backlog, DropReason, Limit, Verdict};

/// Tail drop: accept while the packet fits.
#[derive(Clone, Debug)]
pub struct DropTail {
    pub limit: Limit,
}

impl DropTail {
    pub fn new(limit: Limit) -> DropTail {
        DropTail { limit }
    }

    pub fn admit(&self, size: u32, backlog: Backlog) -> Verdict {
        if self.limit.admits(size, backlog) {
            Verdict::Accept
        } else {
            Verdict::Drop(DropReason::Overflow)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_limit_counts_the_arriving_packet() {
        let d = DropTail::new(Limit::Bytes(3000));
        let b = Backlog { bytes: 1500, packets: 1 };
        assert_eq!(d.admit(1500, b), Verdict::Accept);
        assert_eq!(d.admit(1501, b), Verdict::Drop(DropReason::Overflow));
    }

    #[test]
    fn packet_limit_ignores_sizes() {
        let d = DropTail::new(Limit::Packets(2));
        assert_eq!(d.admit(9000, Backlog { bytes: 9000, packets: 1 }), Verdict::Accept);
        assert_eq!(d.admit(40, Backlog { bytes: 80, packets: 2 }), Verdict::Drop(DropReason::Overflow));
    }
}
