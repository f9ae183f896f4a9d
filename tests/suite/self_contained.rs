//! A clone is the whole product: nothing in the repository reads files from beside it
//! (the data sets, fixtures and docs live in `datasets/`, `tests/fixtures/` and
//! `docs/`), every bundled data set is what `datasets/README.md` says it is, and no
//! file is too large to keep in git.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository's files: git's list where there is a git checkout, else every file
/// outside `target/` and hidden folders.
fn repo_files() -> Vec<PathBuf> {
    let root = root();
    let listed = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty());
    if let Some(out) = listed {
        return out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| root.join(String::from_utf8_lossy(p).as_ref()))
            .filter(|p| p.is_file())
            .collect();
    }
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("readable directory")
            .flatten()
        {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') && name != ".ci" || (dir == root && name == "target") {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

#[test]
fn nothing_reads_beside_the_repository() {
    // spelled in two parts so that this file does not find itself
    let outside = format!("{}/{}", "..", "shared");
    let mut found = Vec::new();
    for path in repo_files() {
        let Ok(text) = std::fs::read(&path) else {
            continue;
        };
        if text.windows(outside.len()).any(|w| w == outside.as_bytes()) {
            found.push(
                path.strip_prefix(root())
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
        }
    }
    assert!(
        found.is_empty(),
        "these files refer to {outside}, which a clone does not have: {found:?}"
    );
}

#[test]
fn no_file_is_over_two_mebibytes() {
    let big: Vec<String> = repo_files()
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 2 << 20))
        .map(|p| p.strip_prefix(root()).unwrap_or(&p).display().to_string())
        .collect();
    assert!(big.is_empty(), "files over 2 MiB: {big:?}");
}

/// The sha256 of each bundled benchmark file's content, as `datasets/README.md` lists
/// it (`- \`kin40k/train.csv.gz\` <hex>`), against the decompressed file.
#[test]
fn bundled_data_match_their_checksums() {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let readme = std::fs::read_to_string(root().join("datasets/README.md")).expect("README");
    let mut checked = 0;
    for line in readme.lines() {
        let Some(rest) = line.trim().strip_prefix("- `") else {
            continue;
        };
        let Some((name, hex)) = rest.split_once("` ") else {
            continue;
        };
        let hex = hex.trim();
        if !name.ends_with(".gz") || hex.len() != 64 {
            continue;
        }
        let path = root().join("datasets").join(name);
        let file = std::fs::File::open(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", Path::new(name).display()));
        let mut content = Vec::new();
        flate2::read::MultiGzDecoder::new(file)
            .read_to_end(&mut content)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: String = Sha256::digest(&content)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            got, hex,
            "{name}: the content's sha256 differs from the README's"
        );
        checked += 1;
    }
    assert_eq!(
        checked, 13,
        "every bundled benchmark file is listed with its sha256"
    );
}
