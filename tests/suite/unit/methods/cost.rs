use sgpw::methods::cost::*;
#[test]
fn sizes_and_durations_read() {
    assert_eq!(bytes(6.54e9), "6.1 GiB");
    assert_eq!(bytes(512.0 * 1024.0 * 1024.0), "512 MiB");
    assert_eq!(seconds(150.0), "2.5 min");
    assert_eq!(seconds(0.004), "4 ms");
    assert_eq!(seconds(2e-5), "under 1 ms");
}
