//! File utilities that know nothing of a model: atomic writes, and line numbers for
//! errors in a TOML text.

use crate::error::{Error, Location, Result, Step};
use std::path::Path;

/// The line (1-based) of what `at` names in a TOML text: the key (or the element of an
/// array), else the nearest enclosing table or key the text has. None when the text
/// cannot be parsed or holds none of it.
pub fn line_of(text: &str, at: &Location) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let line = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let mut best: Option<usize> = None;
    let mut value: Option<&DeValue> = None;
    let mut table: Option<&DeTable> = Some(root.get_ref());
    for step in &at.0 {
        match step {
            Step::Key(k) => {
                let (key, v) = table?.get_key_value(k.as_str())?;
                // a key's own span (a `[table]` header's for a table)
                best = Some(line(key.span().start));
                value = Some(v.get_ref());
                table = match v.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                };
            }
            Step::Index(i) => {
                let DeValue::Array(items) = value? else {
                    return best;
                };
                let Some(item) = items.get(*i) else {
                    return best;
                };
                best = Some(line(item.span().start));
                value = Some(item.get_ref());
                table = match item.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                };
            }
        }
    }
    best
}

/// Describe a TOML error with its line number.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}

/// A temporary file name beside `path` (same folder, so a rename replaces it atomically).
pub fn temp_beside(path: &Path) -> std::path::PathBuf {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    dir.join(format!(".{name}.tmp{}", std::process::id()))
}

/// Write a file atomically: a temporary file beside it, then a rename, so a crash
/// never leaves half a file.
pub fn atomic_write(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let tmp = temp_beside(path);
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or_else(|| Path::new("."));
    // Written in full and flushed to the disk before it replaces the old file, so a
    // crash, a kill -9 or a power cut leaves either the old file or the new one.
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    };
    if let Err(e) = write() {
        // a full disk leaves a partial temporary file: do not leave it behind
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::file(
            path,
            format!("cannot write: {}", io_reason(&e)),
        ));
    }
    test_pause_before_rename();
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::file(path, format!("cannot replace: {}", io_reason(&e)))
    })?;
    // The rename itself reaches the disk with the folder's metadata.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The system's words for an I/O error without the "(os error 28)" after them.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    }
}

/// Fault-injection seam for the tests: `SGPW_TEST_SAVE_PAUSE_MS=N` waits N ms between
/// writing the temporary file and renaming it, so a test can kill -9 the process in
/// the middle of a save.
fn test_pause_before_rename() {
    if let Some(ms) = std::env::var("SGPW_TEST_SAVE_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}
