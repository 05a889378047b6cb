//! docs/mechanisms.md carries a table generated from the registries
//! (`netreturn_control::registry`, `netreturn_tcp::CcName::ALL`). This test
//! fails when the table is stale; `NETRETURN_BLESS=1 cargo test -p
//! netreturn-sim --test mechanisms_doc` rewrites it.

use netreturn_control::{ControllerKind, QueueKind, StageKind};
use netreturn_tcp::CcName;

const BEGIN: &str = "<!-- BEGIN GENERATED: crates/sim/tests/mechanisms_doc.rs -->";
const END: &str = "<!-- END GENERATED -->";

fn keys(k: &[&str]) -> String {
    if k.is_empty() {
        "—".into()
    } else {
        k.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ")
    }
}

fn table() -> String {
    let mut s = String::new();
    s.push_str("| `queue =` | mechanism | from | keys |\n|---|---|---|---|\n");
    for &q in QueueKind::ALL {
        let table = q.table().map_or(String::new(), |t| format!("`{t} = {{ ... }}`: "));
        s.push_str(&format!("| `{}` | {} | {} | {}{} |\n", q.name(), q.title(), q.paper(), table, keys(q.keys())));
    }
    for &c in ControllerKind::ALL {
        let rate = if c.needs_rate() { " (needs the link rate `C`)" } else { "" };
        s.push_str(&format!(
            "| `{}` | {} window controller{} | {} | `gateway.{} = {{ ... }}`: {} |\n",
            c.name(),
            c.title(),
            rate,
            c.paper(),
            c.name(),
            keys(c.keys())
        ));
    }
    for &k in StageKind::ALL {
        s.push_str(&format!("| `{}` | {} router stage over DropTail | {} | — |\n", k.name(), k.title(), k.paper()));
    }
    s.push_str("\n| `tcp.cc =` | congestion control |\n|---|---|\n");
    for &(_, name, what) in CcName::ALL {
        s.push_str(&format!("| `{name}` | {what} |\n"));
    }
    s
}

#[test]
fn the_mechanisms_table_in_the_docs_is_generated_from_the_registry() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mechanisms.md");
    let text = std::fs::read_to_string(&path).expect("docs/mechanisms.md");
    let (a, b) = (text.find(BEGIN).expect("BEGIN marker"), text.find(END).expect("END marker"));
    let current = &text[a + BEGIN.len()..b];
    let want = format!("\n{}", table());
    if current != want {
        if std::env::var_os("NETRETURN_BLESS").is_some() {
            std::fs::write(&path, format!("{}{}{}{}", &text[..a], BEGIN, want, &text[b..])).unwrap();
        } else {
            panic!("docs/mechanisms.md is stale; rerun with NETRETURN_BLESS=1. Expected:\n{want}");
        }
    }
}
