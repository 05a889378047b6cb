//! Helpers shared by the fuzz targets.

/// A bug the fuzzer found (fuzz/regressions/README.md, case 1), fixed:
/// `netreturn_wire::ipv4::strip_ngwa` trimmed trailing 0x01 bytes of the
/// kept option bytes as NOP padding, so an option whose data ended in 0x01
/// lost its last bytes. `false`: the targets check those packets too.
pub const KNOWN_STRIP_TRIM_BUG: bool = false;

/// Whether `strip_ngwa` on a header with these IPv4 option bytes would hit
/// the known bug: after removing the first NGWA option and the trailing
/// NOPs, the last option left is a multi-byte one ending in 0x01.
pub fn strip_trims_option_data(opts: &[u8]) -> bool {
    let mut elems: Vec<&[u8]> = Vec::new();
    let mut removed = false;
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => break,
            1 => {
                elems.push(&opts[i..i + 1]);
                i += 1;
            }
            kind => {
                let Some(&len) = opts.get(i + 1) else { return false };
                let len = len as usize;
                if len < 2 || i + len > opts.len() {
                    return false;
                }
                if !removed && kind == 33 && len == 6 {
                    removed = true;
                } else {
                    elems.push(&opts[i..i + len]);
                }
                i += len;
            }
        }
    }
    while elems.last().is_some_and(|e| *e == [1]) {
        elems.pop();
    }
    elems.last().is_some_and(|e| e.len() > 1 && e[e.len() - 1] == 1)
}

/// The IPv4 options that are neither NOP, EOL nor NGWA, as bytes.
pub fn other_options(ip: &netreturn_wire::ipv4::Packet<&[u8]>) -> Vec<Vec<u8>> {
    use netreturn_wire::ipv4::Ipv4Option;
    ip.option_iter()
        .filter_map(|o| match o {
            Ipv4Option::Unknown { kind, data } => Some([&[kind][..], data].concat()),
            Ipv4Option::Malformed => Some(vec![]),
            _ => None,
        })
        .collect()
}
