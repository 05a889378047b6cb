//! An allocator that puts large blocks on transparent huge pages.
//!
//! At 100x scale of `bench/scaled` a hop reads a packet slot, two interface
//! records, a routing row and, at an end host, a flow's record, each at a
//! random place in tables of 5-8 MB (packet slots, 12 400 interfaces, 3100
//! flows of 2.6 KB). On 4 KiB pages those 25 MB are ~6000 pages, more than
//! the data TLB holds, so most first touches of a hop also walk the page
//! table; on 2 MiB pages they are a dozen. This machine's kernel hands out
//! huge pages only to memory that asks for them (`madvise` in
//! `/sys/kernel/mm/transparent_hugepage/enabled`), and glibc's `malloc`
//! does not ask (unless `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`).
//!
//! [`HugePages`] serves every block of [`HUGE`] bytes or more from its own
//! anonymous mapping, aligned to 2 MiB and advised `MADV_HUGEPAGE` before
//! its first touch (Linux `madvise(2)`), and every smaller block from the
//! system allocator. Where a run's memory lives changes nothing it
//! computes: results are the same bit for bit. Registered as the global
//! allocator by the `netreturn-sim` binary and the Python extension.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of this size and more get their own huge-page mapping: one huge
/// page. Smaller tables (every table at 1x and 10x scale but the packet
/// slots) stay with `malloc`, so small runs run as before.
pub const HUGE: usize = 2 << 20;

/// The global allocator of the simulator's binaries ([module docs](self)).
pub struct HugePages;

#[cfg(target_os = "linux")]
mod sys {
    use std::ffi::{c_int, c_long, c_void};

    extern "C" {
        pub fn mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, off: c_long) -> *mut c_void;
        pub fn munmap(addr: *mut c_void, len: usize) -> c_int;
        pub fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }
    // <sys/mman.h> (the same on x86_64 and aarch64).
    pub const PROT_READ_WRITE: c_int = 0x1 | 0x2;
    pub const MAP_PRIVATE_ANONYMOUS: c_int = 0x02 | 0x20;
    pub const MADV_HUGEPAGE: c_int = 14;
    pub const MAP_FAILED: *mut c_void = !0usize as *mut c_void;
}

/// `size` rounded up to whole huge pages: the length of a block's mapping.
fn mapped_len(size: usize) -> usize {
    size.div_ceil(HUGE) * HUGE
}

#[cfg(target_os = "linux")]
impl HugePages {
    /// A mapping of `mapped_len(size)` bytes at a 2 MiB boundary, advised
    /// huge (a kernel without transparent huge pages refuses the advice;
    /// the block is then on small pages, as from `malloc`).
    unsafe fn map(size: usize) -> *mut u8 {
        let len = mapped_len(size);
        // Map one huge page more and trim, to start on a 2 MiB boundary (a
        // huge page backs only a whole aligned 2 MiB range of a mapping).
        let raw = sys::mmap(std::ptr::null_mut(), len + HUGE, sys::PROT_READ_WRITE, sys::MAP_PRIVATE_ANONYMOUS, -1, 0);
        if raw == sys::MAP_FAILED {
            return std::ptr::null_mut();
        }
        let start = (raw as usize).next_multiple_of(HUGE);
        let head = start - raw as usize;
        if head > 0 {
            sys::munmap(raw, head);
        }
        let tail = HUGE - head;
        if tail > 0 {
            sys::munmap((start + len) as *mut _, tail);
        }
        sys::madvise(start as *mut _, len, sys::MADV_HUGEPAGE);
        start as *mut u8
    }
}

#[cfg(target_os = "linux")]
// SAFETY: blocks of HUGE bytes or more come from `map` (fresh zeroed
// mappings aligned to 2 MiB, enough for any alignment up to that) and go
// back to `munmap` with the same length, which the layout's size fixes;
// smaller blocks and larger alignments are the system allocator's, both ways.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= HUGE && layout.align() <= HUGE {
            HugePages::map(layout.size())
        } else {
            System.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= HUGE && layout.align() <= HUGE {
            // A fresh anonymous mapping reads as zeros.
            HugePages::map(layout.size())
        } else {
            System.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() >= HUGE && layout.align() <= HUGE {
            sys::munmap(ptr as *mut _, mapped_len(layout.size()));
        } else {
            System.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let huge = |size: usize| size >= HUGE && layout.align() <= HUGE;
        if !huge(layout.size()) && !huge(new_size) {
            return System.realloc(ptr, layout, new_size);
        }
        if huge(layout.size()) && huge(new_size) && mapped_len(layout.size()) == mapped_len(new_size) {
            return ptr; // the mapping already holds it
        }
        // A new block (a huge one advised before the copy touches it),
        // the contents, the old block freed: each by its own size's rule.
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        let new = self.alloc(new_layout);
        if !new.is_null() {
            std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        new
    }
}

#[cfg(not(target_os = "linux"))]
// SAFETY: the system allocator's, unchanged.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        System.realloc(ptr, layout, new_size)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_large_block_starts_on_a_huge_page_boundary_reads_as_zeros_and_keeps_its_contents_when_it_grows() {
        let a = HugePages;
        unsafe {
            let layout = Layout::from_size_align(HUGE + 100, 64).unwrap();
            let p = a.alloc_zeroed(layout);
            assert!(!p.is_null());
            assert_eq!(p as usize % HUGE, 0, "a large block is aligned to 2 MiB");
            assert!(std::slice::from_raw_parts(p, layout.size()).iter().all(|&b| b == 0));
            for i in 0..layout.size() {
                *p.add(i) = (i % 251) as u8;
            }
            // Within its mapping, then past it: the contents move along.
            let p = a.realloc(p, layout, 2 * HUGE - 1);
            let layout = Layout::from_size_align(2 * HUGE - 1, 64).unwrap();
            let q = a.realloc(p, layout, 5 * HUGE);
            assert_eq!(q as usize % HUGE, 0);
            assert!((0..HUGE + 100).all(|i| *q.add(i) == (i % 251) as u8), "contents lost in the move");
            // Shrunk below the threshold: back to the system allocator.
            let r = a.realloc(q, Layout::from_size_align(5 * HUGE, 64).unwrap(), 1000);
            assert!((0..1000).all(|i| *r.add(i) == (i % 251) as u8));
            a.dealloc(r, Layout::from_size_align(1000, 64).unwrap());
        }
    }

    #[test]
    fn a_small_block_grows_into_a_large_one_with_its_contents() {
        let a = HugePages;
        unsafe {
            let layout = Layout::from_size_align(4096, 8).unwrap();
            let p = a.alloc(layout);
            for i in 0..4096 {
                *p.add(i) = (i % 13) as u8;
            }
            let q = a.realloc(p, layout, 3 * HUGE);
            assert_eq!(q as usize % HUGE, 0, "the grown block is a huge mapping");
            assert!((0..4096).all(|i| *q.add(i) == (i % 13) as u8));
            a.dealloc(q, Layout::from_size_align(3 * HUGE, 8).unwrap());
        }
    }
}
