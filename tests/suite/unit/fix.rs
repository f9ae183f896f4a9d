use sgpw::fix::*;

#[test]
fn fixes_read_and_write_the_same_text() {
    for text in ["noise_variance=0.01", "lengthscales", "inducing_inputs"] {
        let f: Fix = text.parse().expect("parses");
        assert_eq!(f.to_string(), text);
    }
    let f: Fix = " signal_variance = 2 ".parse().expect("spaces");
    assert_eq!(f.value, Some(2.0));
    assert!("noise_variance=-1".parse::<Fix>().is_err());
    assert!("noise_variance=abc".parse::<Fix>().is_err());
    assert!("".parse::<Fix>().is_err());
    assert!("Noise".parse::<Fix>().is_err());
    // a kernel part's path, with or without a value
    for text in [
        "se1.ls",
        "periodic.period",
        "spectral_mixture.means",
        "se2.var=4",
    ] {
        let f: Fix = text.parse().expect("a path");
        assert_eq!(f.to_string(), text);
    }
    for bad in ["se1.", ".ls", "se1.ls.x", "1se.ls", "se1.l2"] {
        assert!(bad.parse::<Fix>().is_err(), "{bad}");
    }
}
