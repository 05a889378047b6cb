//! Builds the kernel datapath's eBPF object (`bpf/datapath.bpf.c`, issue
//! 28) with clang when clang is there (`$CLANG`, else `clang` on the PATH).
//! Without clang the gateway still builds; `--datapath kernel` then says
//! how to get it (`make system-deps` installs clang and libbpf-dev).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(netreturn_bpf)");
    println!("cargo::rerun-if-changed=bpf/datapath.bpf.c");
    println!("cargo::rerun-if-env-changed=CLANG");
    // Built again once libbpf-dev (and so, with make deps, clang) arrives.
    println!("cargo::rerun-if-changed=/usr/include/bpf/bpf_helpers.h");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("datapath.bpf.o");
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    // <asm/types.h> of the target, under Debian's multiarch include path.
    let arch = match std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("x86_64") => "x86_64-linux-gnu",
        Ok("aarch64") => "aarch64-linux-gnu",
        Ok(other) => {
            println!("cargo::warning=no eBPF datapath for target arch {other}");
            return;
        }
        Err(_) => return,
    };
    if !std::path::Path::new("/usr/include/bpf/bpf_helpers.h").exists() {
        println!("cargo::warning=no eBPF datapath in this build: no <bpf/bpf_helpers.h> (make system-deps)");
        return;
    }
    let status = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg(format!("-I/usr/include/{arch}"))
        .args(["-c", "bpf/datapath.bpf.c", "-o"])
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => println!("cargo::rustc-cfg=netreturn_bpf"),
        Ok(s) => panic!("{clang} failed to build bpf/datapath.bpf.c ({s})"),
        Err(e) => println!(
            "cargo::warning=no eBPF datapath in this build: {clang}: {e} (install clang and libbpf-dev: make system-deps)"
        ),
    }
}
