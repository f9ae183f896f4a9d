//! The documentation cannot drift from the program: the README's worked example prints
//! exactly what the README shows, every relative link in the Markdown files reaches a
//! file and heading that exist, every "docs/methods.md §N" citation lands on a section,
//! and CI runs the README's test command.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The marker the worked example's block follows in README.md.
const EXAMPLE_MARKER: &str = "<!-- readme-example:";

/// The worked example: the command after `$ ` (continuation lines joined) and the
/// lines it prints, from the fenced block right after the marker.
fn readme_example() -> (Vec<String>, Vec<String>) {
    let readme = read("README.md");
    let mut lines = readme
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(EXAMPLE_MARKER));
    assert!(
        lines.next().is_some(),
        "README.md has no `{EXAMPLE_MARKER}` marker before its worked example"
    );
    assert!(
        lines.next().is_some_and(|l| l.starts_with("```")),
        "the line after `{EXAMPLE_MARKER}` in README.md must open a fenced block"
    );
    let block: Vec<&str> = lines.take_while(|l| !l.starts_with("```")).collect();
    let first = block
        .first()
        .and_then(|l| l.strip_prefix("$ "))
        .expect("the example block starts with `$ COMMAND`");
    let mut command = first.to_string();
    let mut rest = block[1..].iter();
    while command.ends_with('\\') {
        command.pop();
        let next = rest.next().expect("a continuation line after `\\`");
        command.push(' ');
        command.push_str(next.trim());
    }
    let words: Vec<String> = command.split_whitespace().map(String::from).collect();
    let output = rest.map(|l| l.to_string()).collect();
    (words, output)
}

#[test]
fn readme_example_prints_what_the_readme_shows() {
    let (words, expected) = readme_example();
    assert!(
        words.first().is_some_and(|w| w.ends_with("sgpw")),
        "the README's example must run sgpw, not {words:?}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(&words[1..])
        .current_dir(root())
        .output()
        .expect("run sgpw");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the README's example failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<&str> = stdout.lines().collect();
    // every line must match to the character, except the wall-clock time
    let matches = got.len() == expected.len()
        && got.iter().zip(&expected).all(|(g, e)| {
            if e.starts_with("time ") {
                g.strip_prefix("time")
                    .and_then(|t| t.trim().strip_suffix(" s"))
                    .is_some_and(|t| t.parse::<f64>().is_ok())
            } else {
                g == e
            }
        });
    assert!(
        matches,
        "README.md's worked example (the block after `{EXAMPLE_MARKER}`) no longer shows \
         what `{}` prints. Update README.md with this output (and the prose around it if \
         the numbers it quotes changed):\n{stdout}\nThe README shows:\n{}",
        words.join(" "),
        expected.join("\n")
    );
}

/// The Markdown files of the repository: git's list where there is a checkout, else
/// every `.md` outside `target/` and hidden folders.
fn markdown_files() -> Vec<PathBuf> {
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "*.md",
        ])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty());
    if let Some(out) = listed {
        return out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| root().join(String::from_utf8_lossy(p).as_ref()))
            .filter(|p| p.is_file())
            .collect();
    }
    let mut files = Vec::new();
    let mut dirs = vec![root()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || (dir == root() && name == "target") {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".md") {
                files.push(path);
            }
        }
    }
    files
}

/// The text of a Markdown file outside fenced code blocks, line by line.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// A line without its inline code spans (`…`), whose text is not Markdown.
fn without_code(line: &str) -> String {
    line.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect()
}

/// The anchor GitHub gives a heading: its text lower-cased, spaces as `-`, and every
/// character that is not a letter, a digit, `-` or `_` dropped; repeats get `-1`, `-2`.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for line in prose_lines(text) {
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        let title = title.trim_start_matches('#').trim().replace('`', "");
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut unique = slug.clone();
        let mut k = 1;
        while seen.contains(&unique) {
            unique = format!("{slug}-{k}");
            k += 1;
        }
        seen.insert(unique);
    }
    seen
}

/// The targets of the inline links `[text](target)` in a file's prose.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            if let Some(end) = rest.find(')') {
                out.push(rest[..end].trim().to_string());
                rest = &rest[end + 1..];
            }
        }
    }
    out
}

#[test]
fn relative_links_in_markdown_resolve() {
    let files = markdown_files();
    assert!(
        files.iter().any(|f| f.ends_with("docs/methods.md")),
        "docs/methods.md is missing"
    );
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable");
        let name = file
            .strip_prefix(root())
            .unwrap_or(file)
            .display()
            .to_string();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap_or(Path::new(".")).join(path)
            };
            if !dest.exists() {
                broken.push(format!("{name}: ({target}): no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let dest_text = std::fs::read_to_string(&dest).unwrap_or_default();
                if !anchors(&dest_text).contains(anchor) {
                    broken.push(format!("{name}: ({target}): no heading with that anchor"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Source comments, `--help` texts, sessions and tests cite "docs/methods.md §N": each
/// N must be a section of docs/methods.md.
#[test]
fn methods_citations_name_existing_sections() {
    let methods = read("docs/methods.md");
    let sections: HashSet<String> = prose_lines(&methods)
        .into_iter()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| {
            let after = l.trim_start_matches('#').trim().strip_prefix('§')?;
            Some(after.split_whitespace().next()?.to_string())
        })
        .collect();
    let cite = "docs/methods.md §";
    let mut checked = 0;
    let mut missing = Vec::new();
    let mut dirs = vec![
        root().join("src"),
        root().join("tests"),
        root().join("benches"),
        root().join("sessions"),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            for (i, _) in text.match_indices(cite) {
                let number: String = text[i + cite.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let number = number.trim_end_matches('.').to_string();
                if number.is_empty() {
                    continue; // "§N" in prose about the citations themselves
                }
                checked += 1;
                if !sections.contains(&number) {
                    missing.push(format!(
                        "{}: §{number}",
                        path.strip_prefix(root()).unwrap_or(&path).display()
                    ));
                }
            }
        }
    }
    assert!(checked > 0, "no citations of {cite}N found");
    assert!(
        missing.is_empty(),
        "citations of sections docs/methods.md does not have (its sections: {sections:?}):\n{}",
        missing.join("\n")
    );
}

#[test]
fn ci_runs_the_readme_test_command_and_the_readme_stays_short() {
    let readme = read("README.md");
    let command = readme
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cargo test"))
        .expect("README.md shows a test command");
    // .ci/run runs it as a command of its own (a failure's status may be kept for
    // later: `cargo test … || cargo_ok=$?`), beside its `--no-run` build step
    let ci = read(".ci/run");
    assert!(
        ci.lines()
            .map(|l| l.split(" || ").next().unwrap_or("").trim())
            .any(|l| l == command),
        ".ci/run must run the README's test command `{command}`"
    );
    let n = readme.lines().count();
    assert!(
        n <= 300,
        "README.md has {n} lines; keep it a guide of at most 300 and move detail into docs/"
    );
}

/// Every figure in the docs is what its command makes today: each indented
/// `sgpw plot … --out docs/…` line is run (with `--out` in a temporary folder) and its
/// file compared byte for byte with the committed one, so a re-run session or a change
/// to the drawing cannot leave a stale figure behind.
#[test]
fn figures_in_the_docs_are_what_their_commands_draw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("reads");
        for line in text.lines() {
            let Some(cmd) = line.trim_start().strip_prefix("sgpw plot ") else {
                continue;
            };
            if !line.starts_with("    ") {
                continue;
            }
            let args: Vec<&str> = cmd.split_whitespace().collect();
            let Some(k) = args.iter().position(|a| *a == "--out") else {
                continue;
            };
            let Some(committed) = args.get(k + 1).filter(|o| o.starts_with("docs/")) else {
                continue;
            };
            let out = dir.path().join(format!("figure-{checked}-{}", {
                Path::new(committed)
                    .file_name()
                    .expect("a file name")
                    .to_string_lossy()
            }));
            let mut run: Vec<String> = vec!["plot".into()];
            run.extend(args.iter().map(|a| a.to_string()));
            run[k + 2] = out.to_string_lossy().into_owned();
            let o = Command::new(env!("CARGO_BIN_EXE_sgpw"))
                .args(&run)
                .current_dir(root())
                .output()
                .expect("runs sgpw");
            assert!(
                o.status.success(),
                "{}: `sgpw {}` failed: {}",
                file.display(),
                run.join(" "),
                String::from_utf8_lossy(&o.stderr)
            );
            let made = std::fs::read(&out).expect("the figure was written");
            let kept = std::fs::read(root().join(committed))
                .unwrap_or_else(|e| panic!("{}: {committed}: {e}", file.display()));
            assert!(
                made == kept,
                "{}: {committed} is not what `sgpw plot {cmd}` draws now; run the command",
                file.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 10,
        "only {checked} figure commands found in the docs"
    );
}
