fn main() -> std::process::ExitCode {
    // built without MPI: `--distributed` says how to get sgpw-mpi
    sgpw::cli::main(None)
}
