//! `sgpw-mpi`: sgpw's command line with `--distributed` (MPI), docs/distributed.md.

fn main() -> std::process::ExitCode {
    sgpw::cli::main(Some(&sgpw_mpi::Mpi))
}
