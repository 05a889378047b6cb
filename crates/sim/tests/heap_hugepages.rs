//! Small blocks of the simulator's allocator land in a heap advised for
//! huge pages (`netreturn_sim::hugepages`). Its own binary without libtest's
//! harness (`harness = false` in Cargo.toml): glibc's main heap, the one the
//! allocator advises, serves the first thread only, and libtest runs each
//! test on a thread of its own.

use netreturn_sim::hugepages::HugePages;
use std::alloc::{GlobalAlloc, Layout};

#[global_allocator]
static ALLOC: HugePages = HugePages;

/// The `VmFlags` of the mapping of `/proc/self/smaps` that holds `addr`.
fn vm_flags_of(addr: usize) -> Option<String> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-') {
            if let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16)) {
                inside = (lo..hi).contains(&addr);
                continue;
            }
        }
        if inside {
            if let Some(flags) = line.strip_prefix("VmFlags:") {
                return Some(flags.trim().to_string());
            }
        }
    }
    None
}

fn main() {
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if !cfg!(target_os = "linux") || thp.is_empty() || thp.contains("[never]") {
        println!("skipped: no transparent huge pages here ({:?})", thp.trim());
        return;
    }
    // Small blocks, 64 MiB in all: the heap grows several times while they
    // are handed out, and each growth must be advised.
    let layout = Layout::from_size_align(4000, 8).unwrap();
    let blocks: Vec<usize> = (0..16_384).map(|_| unsafe { ALLOC.alloc(layout) } as usize).collect();
    assert!(blocks.iter().all(|&b| b != 0), "an allocation failed");
    let last = *blocks.last().unwrap();
    let flags = vm_flags_of(last).expect("the last block's mapping is in /proc/self/smaps");
    assert!(
        flags.split_whitespace().any(|f| f == "hg"),
        "the heap part holding the last small block is not advised huge (VmFlags: {flags})"
    );
    // Writes go through, and the blocks go back to the heap.
    for (i, &b) in blocks.iter().enumerate() {
        unsafe { (b as *mut u64).write(i as u64) };
    }
    assert!(blocks.iter().enumerate().all(|(i, &b)| unsafe { (b as *const u64).read() } == i as u64));
    for &b in &blocks {
        unsafe { ALLOC.dealloc(b as *mut u8, layout) };
    }
    println!("test small_blocks_land_in_a_heap_advised_for_huge_pages ... ok");
}
