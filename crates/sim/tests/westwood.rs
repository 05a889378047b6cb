//! The original Westwood (`tcp.cc = "westwood"`) in scenarios: its table
//! of settings, and the SARBE paper's claim behind its Fig. 2b (seed 004,
//! sections 2 and 3.1): "if ACK packets encounter the network congestion along the
//! backward path, called ACK compression, TCP Westwood overestimates the
//! available bandwidth". `scenarios/sarbe/ack_compression.toml`: a 1.5 Mb/s
//! bottleneck, a 0.5 Mb/s CBR beside the traced FTP, and a reverse FTP from
//! 30 s to 120 s whose data queue up the traced flow's ACKs.

use netreturn_sim::scenario::MINI;
use netreturn_sim::world::World;
use netreturn_sim::Scenario;

/// The bottleneck's rate, Mb/s on the wire.
const LINK_MBPS: f64 = 1.5;

/// The traced flow's mean bandwidth estimate and the mean bandwidth
/// available to it, Mb/s, from 40 s (the reverse FTP has filled its
/// window) to 120 s (it stops).
fn during_the_reverse_ftp(cc: &str) -> (f64, f64) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/sarbe/ack_compression.toml");
    let s = Scenario::from_file(&path, &[("tcp".into(), cc.into())]).unwrap();
    let mut w = World::new(&s, 1).unwrap();
    w.run();
    let tr = &w.rec.traces[0];
    let bwe: Vec<f64> =
        tr.time_s.iter().zip(&tr.bwe_mbps).filter(|(t, _)| (40.0..120.0).contains(*t)).map(|(_, b)| *b).collect();
    let (times, _) = &w.rec.queue_series;
    let avail: Vec<f64> = times
        .iter()
        .zip(&w.rec.avail_mbps)
        .filter(|(t, a)| (40.0..120.0).contains(*t) && a.is_finite())
        .map(|(_, a)| *a)
        .collect();
    assert!(bwe.len() > 100 && avail.len() > 100, "{} estimates, {} available", bwe.len(), avail.len());
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (b, a) = (mean(&bwe), mean(&avail));
    eprintln!("{cc}: mean estimate {b:.3} Mb/s, available {a:.3} Mb/s (on the wire)");
    (b, a)
}

#[test]
fn with_ack_compression_the_original_westwood_estimates_more_than_the_link_rate_and_westwood_plus_does_not() {
    let (orig, avail) = during_the_reverse_ftp("westwood");
    assert!(orig > LINK_MBPS, "Westwood {orig} Mb/s, available {avail}");
    let (plus, avail) = during_the_reverse_ftp("westwood+");
    // Westwood+ counts payload only, so it stays below what is available
    // on the wire even when it tracks it.
    assert!(plus < avail && plus < LINK_MBPS, "Westwood+ {plus} Mb/s, available {avail}");
}

#[test]
fn the_westwood_table_sets_tau_m_and_the_window_rule_and_refuses_what_the_filter_cannot_run() {
    let with =
        |table: &str| MINI.replace("[topology]", &format!("[tcp]\ncc = \"westwood\"\nwestwood = {table}\n[topology]"));
    let s = Scenario::from_toml(&with(r#"{ tau = "2s", m = 4, keep_lower_cwnd = false }"#), "w.toml", &[]).unwrap();
    let netreturn_tcp::CcKind::Westwood(c) = s.tcp.cc_params.kind(s.tcp.cc) else { panic!("{:?}", s.tcp.cc) };
    assert_eq!((c.tau.secs_f64(), c.m, c.keep_lower_cwnd), (2.0, 4, false));
    for (table, field, says) in [
        (r#"{ tau = "0s" }"#, "tcp.westwood.tau", "longer than 0"),
        ("{ m = 1 }", "tcp.westwood.m", "m >= 2"),
        (r#"{ tua = "1s" }"#, "tcp.westwood", "tau"),
    ] {
        let e = Scenario::from_toml(&with(table), "w.toml", &[]).unwrap_err();
        assert!(e.field.starts_with(field) && e.message.contains(says), "{table}: {e}");
        assert_eq!(e.file, "w.toml");
    }
}
