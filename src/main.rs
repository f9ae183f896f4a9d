fn main() -> std::process::ExitCode {
    keep_freed_memory();
    sgpw::cli::main()
}

/// Every evaluation allocates and frees a few n×m matrices (16 MB each at n = 10000,
/// m = 200). By default glibc returns blocks that large to the kernel on free and
/// maps fresh pages for the next one; those page faults were a third of a FITC
/// evaluation. Blocks under 32 MB now stay in the heap for reuse.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes two malloc tuning parameters, before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}
