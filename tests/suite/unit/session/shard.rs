use sgpw::session::RunKey;
use sgpw::session::shard::*;
use std::path::Path;
use std::path::PathBuf;

#[test]
fn shards_parse_and_split_every_run_once() {
    assert_eq!("2/5".parse::<Shard>(), Ok(Shard { index: 2, count: 5 }));
    for bad in ["5/5", "1", "a/3", "1/0", "-1/3"] {
        assert!(bad.parse::<Shard>().is_err(), "{bad}");
    }
    let keys: Vec<RunKey> = (0..200)
        .map(|i| RunKey {
            dataset: format!("d{}", i % 3),
            label: "fitc".into(),
            m: 10 + i,
            seed: 1,
        })
        .collect();
    let shards: Vec<Shard> = (0..4).map(|index| Shard { index, count: 4 }).collect();
    for k in &keys {
        assert_eq!(shards.iter().filter(|s| s.owns(k)).count(), 1);
    }
    // roughly balanced
    for s in &shards {
        let n = keys.iter().filter(|k| s.owns(k)).count();
        assert!((30..=70).contains(&n), "{s}: {n} of 200");
    }
    assert_eq!(
        shards[1].path(Path::new("sessions/sweep.toml")),
        PathBuf::from("sessions/sweep.shard-1-of-4.toml")
    );
}
