//! All the tests but two, one binary: each module is one former test file, so the
//! suite links the library (polars, faer, ratatui, resvg, …) once instead of once per
//! file. Run one part with a filter: `cargo test --release --test suite kernels::`.
//! `unit` holds the library's unit tests, one module per source module (`cargo test
//! --release --test suite unit::methods::exact::`), so `cargo test` compiles the library
//! once, not again as its own test harness (`[lib] test = false` in Cargo.toml).
//! `tests/allocations.rs` (a counting global allocator) stays a binary of its own, and
//! `mpi/tests/mpi.rs` is the package sgpw-mpi's.

mod bernoulli_link;
mod changepoints;
mod chunks;
mod class_labels;
mod cli;
mod common;
mod comparisons;
mod components;
mod composed_families;
mod composed_kernels;
mod composed_projected;
mod data_errors;
mod docs;
mod eigengp;
mod ep;
mod exposure;
mod faults;
mod fixed;
mod fuzz;
mod greedy;
mod interdomain;
mod interdomain_components;
mod jobs;
mod kernels;
mod likelihood;
mod model_errors;
mod new_family;
mod new_likelihood;
mod nystrom;
mod parquet_damaged;
mod plot;
mod predictive;
mod reference_fitc_exact;
mod rvm;
mod self_contained;
mod shard;
mod sparse_family;
mod spectral_composed;
mod spectrum;
mod spgp_extensions;
mod starts;
mod svgp;
mod svgp_families;
mod svgp_likelihoods;
mod svgp_stream;
mod threads;
mod tui_loading;
mod tui_pty;
mod tui_same_numbers;
mod tui_snapshots;
mod typed_states;
mod unit;
