use sgpw::methods::start::*;

/// The second start's subset grows with the main fit's cost (n, m, D, iterations),
/// between 200 points and 1000, never above n; the six starts' part with the inputs.
#[test]
fn the_second_start_subset_follows_the_cost_of_the_main_fit() {
    // kin40k, m = 50 and 25, 500 iterations: the cap
    assert_eq!(second_start_subset(10_000, 50, 8, 500), COLLAPSE_SUBSET);
    assert_eq!(second_start_subset(10_000, 25, 8, 500), COLLAPSE_SUBSET);
    // 2,400 rows to fit, fitc m = 20, 100 iterations
    assert_eq!(second_start_subset(2_400, 20, 8, 100), 322);
    // pumadyn-32nm, m = 10: fewer
    assert_eq!(second_start_subset(7_168, 10, 32, 500), 721);
    // few rows, few iterations: the floor; fewer rows than the floor: all of them
    assert_eq!(second_start_subset(1_000, 5, 2, 20), MIN_SECOND_SUBSET);
    assert_eq!(second_start_subset(150, 10, 3, 500), 150);
    // more iterations, more points
    assert!(second_start_subset(2_400, 20, 8, 200) > second_start_subset(2_400, 20, 8, 100));
    assert_eq!(warm_subset(8), WARM_SUBSET);
    assert_eq!(warm_subset(32), 384);
}
