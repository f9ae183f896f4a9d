fn main() -> std::process::ExitCode {
    sgpw::cli::main()
}
