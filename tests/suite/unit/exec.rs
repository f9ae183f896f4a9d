use sgpw::exec::*;

#[test]
fn memory_sizes_parse_with_their_units() {
    assert_eq!(parse_memory_size("0"), Ok(MemorySize(0)));
    assert_eq!(parse_memory_size("512M"), Ok(MemorySize(512 << 20)));
    assert_eq!(parse_memory_size("4g"), Ok(MemorySize(4 << 30)));
    assert_eq!(parse_memory_size("1.5GiB"), Ok(MemorySize(3 << 29)));
    assert_eq!(parse_memory_size("64KB"), Ok(MemorySize(64 << 10)));
    assert_eq!(parse_memory_size("1000B"), Ok(MemorySize(1000)));
    assert_eq!(
        parse_memory_size("100%"),
        Ok(MemorySize(memory_available()))
    );
    for bad in ["512", "12Q", "-1G", "G", "", "150%", "x%", "nanG"] {
        let e = parse_memory_size(bad).expect_err(bad);
        assert!(e.contains(&format!("'{bad}'")), "{bad}: {e}");
    }
}
