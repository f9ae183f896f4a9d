//! The Parquet target: small files of several shapes (float, integer, boolean, text and
//! nullable columns; one or several row groups; every codec polars writes; files from
//! pyarrow with v2 pages, dictionaries and delta encodings), each damaged where a
//! damaged disk or a cut copy would hit it: single bytes flipped or overwritten, and
//! cuts, in each region of the file (the magic bytes, a page header, page data, the
//! footer's Thrift, the footer length). A case is loaded in a worker process, so that
//! an abort inside a reader is reported as a failing case with its input rather than
//! killing the run.

use super::{check_dataset, column_name, fuzz, reached};
use proptest::prelude::*;
use sgpw::data::LoadSpec;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// Files written by pyarrow (`tests/fixtures/parquet/seeds/`, see the README there):
/// encodings polars does not write.
const SEEDS: &[&str] = &[
    "pyarrow_v2_delta.parquet",
    "pyarrow_v2_delta_byte_array.parquet",
    "pyarrow_v1_dict_gzip.parquet",
    "pyarrow_v1_brotli.parquet",
    "pyarrow_v1_lz4.parquet",
    "pyarrow_v1_plain.parquet",
    "pyarrow_unusable_columns.parquet",
    "pyarrow_int96.parquet",
];

fn seed(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/parquet/seeds")
        .join(name)
}

#[derive(Debug, Clone)]
pub enum ParquetColumn {
    F64(Vec<f64>),
    F32(Vec<f32>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<bool>),
    Text(Vec<String>),
    Nullable(Vec<Option<f64>>),
    NullableInt(Vec<Option<i64>>),
}

fn parquet_column(rows: usize) -> impl Strategy<Value = ParquetColumn> {
    let f = prop_oneof![
        4 => -10.0..10.0f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => any::<f64>(),
    ];
    prop_oneof![
        10 => prop::collection::vec(-10.0..10.0f64, rows).prop_map(ParquetColumn::F64),
        3 => prop::collection::vec(f.clone(), rows).prop_map(ParquetColumn::F64),
        1 => prop::collection::vec(any::<f32>(), rows).prop_map(ParquetColumn::F32),
        1 => prop::collection::vec(any::<i64>(), rows).prop_map(ParquetColumn::I64),
        // few distinct values: polars writes a dictionary
        2 => prop::collection::vec(-3i32..3, rows).prop_map(ParquetColumn::I32),
        1 => prop::collection::vec(any::<bool>(), rows).prop_map(ParquetColumn::Bool),
        1 => prop::collection::vec("[a-z0-9.]{0,4}", rows).prop_map(ParquetColumn::Text),
        1 => prop::collection::vec("-?[0-9]{1,3}(\\.[0-9]{1,2})?", rows).prop_map(ParquetColumn::Text),
        2 => prop::collection::vec(prop::option::of(f), rows).prop_map(ParquetColumn::Nullable),
        1 => prop::collection::vec(prop::option::of(-5i64..5), rows).prop_map(ParquetColumn::NullableInt),
    ]
}

/// The undamaged file: written by polars, or one of the pyarrow seeds.
#[derive(Debug, Clone)]
pub enum Base {
    Written {
        columns: Vec<(String, ParquetColumn)>,
        /// Rows per row group (several groups), or polars' default (one).
        row_group: Option<usize>,
        codec: usize,
        /// A small page size: several pages per column chunk.
        small_pages: bool,
    },
    Seed(usize),
}

/// The parts of a Parquet file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Region {
    Magic,
    PageHeader,
    PageData,
    Footer,
    FooterLength,
    EndMagic,
    Anywhere,
}

#[derive(Debug, Clone)]
pub enum Damage {
    /// XOR the byte at `at` (a fraction of the region's bytes) with a non-zero value.
    Flip(Region, f64, u8),
    /// Overwrite the byte.
    Set(Region, f64, u8),
    /// Cut the file there.
    Cut(Region, f64),
}

#[derive(Debug, Clone)]
pub struct ParquetCase {
    pub base: Base,
    pub damage: Vec<Damage>,
    pub target: Option<String>,
}

fn region() -> impl Strategy<Value = Region> {
    prop_oneof![
        1 => Just(Region::Magic),
        4 => Just(Region::PageHeader),
        3 => Just(Region::PageData),
        5 => Just(Region::Footer),
        1 => Just(Region::FooterLength),
        1 => Just(Region::EndMagic),
        2 => Just(Region::Anywhere),
    ]
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        6 => (region(), 0.0..1.0f64, 1u8..=255).prop_map(|(r, f, x)| Damage::Flip(r, f, x)),
        2 => (region(), 0.0..1.0f64, any::<u8>()).prop_map(|(r, f, b)| Damage::Set(r, f, b)),
        2 => (region(), 0.0..1.0f64).prop_map(|(r, f)| Damage::Cut(r, f)),
    ]
}

fn base() -> impl Strategy<Value = Base> {
    let written = (0usize..30)
        .prop_flat_map(|rows| {
            (
                prop::collection::vec(parquet_column(rows), 1..5),
                prop::option::weighted(0.4, 1usize..10),
                0usize..6,
                prop::bool::weighted(0.2),
            )
        })
        .prop_map(|(cols, row_group, codec, small_pages)| Base::Written {
            columns: cols
                .into_iter()
                .enumerate()
                .map(|(i, c)| (format!("c{i}"), c))
                .collect(),
            row_group,
            codec,
            small_pages,
        });
    prop_oneof![
        3 => written,
        1 => (0..SEEDS.len()).prop_map(Base::Seed),
    ]
}

pub fn parquet_case() -> impl Strategy<Value = ParquetCase> {
    (
        base(),
        prop::collection::vec(damage(), 0..3),
        prop::option::weighted(0.3, column_name()),
    )
        .prop_map(|(base, damage, target)| ParquetCase {
            base,
            damage,
            target,
        })
}

/// The bytes of the undamaged file.
fn base_bytes(base: &Base, path: &Path) -> Vec<u8> {
    use polars_core::prelude::*;
    use polars_io::prelude::*;
    let (columns, row_group, codec, small_pages) = match base {
        Base::Seed(i) => return std::fs::read(seed(SEEDS[*i])).expect("a seed file"),
        Base::Written {
            columns,
            row_group,
            codec,
            small_pages,
        } => (columns, row_group, codec, small_pages),
    };
    let cols: Vec<Column> = columns
        .iter()
        .map(|(name, col)| {
            let name = PlSmallStr::from(name.as_str());
            match col {
                ParquetColumn::F64(v) => Column::new(name, v),
                ParquetColumn::F32(v) => Column::new(name, v),
                ParquetColumn::I64(v) => Column::new(name, v),
                ParquetColumn::I32(v) => Column::new(name, v),
                ParquetColumn::Bool(v) => Column::new(name, v),
                ParquetColumn::Text(v) => Column::new(name, v),
                ParquetColumn::Nullable(v) => Column::new(name, v),
                ParquetColumn::NullableInt(v) => Column::new(name, v),
            }
        })
        .collect();
    let mut df = DataFrame::new_infer_height(cols).expect("a frame");
    let compression = [
        ParquetCompression::Uncompressed,
        ParquetCompression::Snappy,
        ParquetCompression::Zstd(None),
        ParquetCompression::Gzip(None),
        ParquetCompression::Lz4Raw,
        ParquetCompression::Brotli(None),
    ][*codec % 6];
    let file = std::fs::File::create(path).expect("creates");
    ParquetWriter::new(file)
        .with_compression(compression)
        .with_row_group_size(*row_group)
        .with_data_page_size(small_pages.then_some(64))
        .finish(&mut df)
        .expect("writes parquet");
    std::fs::read(path).expect("reads")
}

/// Byte ranges of each region of a Parquet file, found with the Thrift reader of
/// `polars-parquet-format` (empty where the file does not parse).
fn regions(bytes: &[u8]) -> Vec<(Region, std::ops::Range<usize>)> {
    use polars_parquet_format::thrift::protocol::TCompactInputProtocol;
    use polars_parquet_format::{FileMetaData, PageHeader};
    let n = bytes.len();
    let mut out = vec![(Region::Anywhere, 0..n)];
    if n < 12 {
        return out;
    }
    out.push((Region::Magic, 0..4));
    out.push((Region::FooterLength, n - 8..n - 4));
    out.push((Region::EndMagic, n - 4..n));
    let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().expect("4 bytes")) as usize;
    let Some(footer_at) = n.checked_sub(8 + len).filter(|&a| a >= 4) else {
        return out;
    };
    out.push((Region::Footer, footer_at..n - 8));
    let mut cursor = std::io::Cursor::new(&bytes[footer_at..n - 8]);
    let Ok(meta) =
        FileMetaData::read_from_in_protocol(&mut TCompactInputProtocol::new(&mut cursor, 1 << 20))
    else {
        return out;
    };
    for chunk in meta.row_groups.iter().flat_map(|g| &g.columns) {
        let Some(m) = &chunk.meta_data else { continue };
        let mut pos = m.dictionary_page_offset.unwrap_or(m.data_page_offset) as usize;
        let end = pos
            .saturating_add(m.total_compressed_size as usize)
            .min(footer_at);
        while pos < end {
            let mut c = std::io::Cursor::new(&bytes[pos..end]);
            let Ok(h) =
                PageHeader::read_from_in_protocol(&mut TCompactInputProtocol::new(&mut c, 1 << 20))
            else {
                break;
            };
            let body = pos + c.position() as usize;
            let data_end = body
                .saturating_add(h.compressed_page_size.max(0) as usize)
                .min(end);
            out.push((Region::PageHeader, pos..body));
            out.push((Region::PageData, body..data_end));
            pos = data_end;
        }
    }
    out
}

/// The damaged file.
pub fn case_bytes(c: &ParquetCase, path: &Path) -> Vec<u8> {
    let mut bytes = base_bytes(&c.base, path);
    let found = regions(&bytes);
    let spot = |region: Region, at: f64| -> Option<usize> {
        let ranges: Vec<&std::ops::Range<usize>> = found
            .iter()
            .filter(|(r, range)| *r == region && !range.is_empty())
            .map(|(_, range)| range)
            .collect();
        let total: usize = ranges.iter().map(|r| r.len()).sum();
        let mut k = ((total as f64) * at) as usize;
        for r in ranges {
            if k < r.len() {
                return Some(r.start + k);
            }
            k -= r.len();
        }
        None
    };
    let mut cut = None;
    for d in &c.damage {
        match *d {
            Damage::Flip(r, at, x) => {
                if let Some(i) = spot(r, at) {
                    bytes[i] ^= x;
                }
            }
            Damage::Set(r, at, b) => {
                if let Some(i) = spot(r, at) {
                    bytes[i] = b;
                }
            }
            Damage::Cut(r, at) => cut = spot(r, at).or(cut),
        }
    }
    if let Some(i) = cut {
        bytes.truncate(i);
    }
    bytes
}

/// What loading one file did, as the worker reports it.
#[derive(Debug, PartialEq)]
enum Outcome {
    Loaded,
    /// Refused by sgpw's checks of the footer and page headers.
    RefusedByChecks,
    /// Refused by polars while decoding (the checks passed).
    RefusedByReader,
    /// Decoded, then refused by sgpw's checks of the data (types, missing values...).
    RefusedData,
    /// An error after a reader panicked (caught and turned into an error).
    RefusedAfterPanic(String),
    /// A panic in sgpw's own code.
    Panicked(String),
}

const REPLY: &str = "sgpw-fuzz-worker:";

/// A worker process: this test binary run again to serve [`serve`] (see there).
struct Worker {
    child: Child,
    input: ChildStdin,
    replies: std::sync::mpsc::Receiver<String>,
    stderr: PathBuf,
}

impl Worker {
    fn start(dir: &Path) -> Worker {
        let stderr = dir.join("worker.stderr");
        let mut child = Command::new(std::env::current_exe().expect("the test binary"))
            .args([
                "--exact",
                "fuzz::parquet::serve",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("SGPW_FUZZ_WORKER", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("a stderr file"))
            .spawn()
            .expect("starts a worker");
        let input = child.stdin.take().expect("stdin");
        let output: ChildStdout = child.stdout.take().expect("stdout");
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(output).lines().map_while(Result::ok) {
                // (libtest's "test parquet::serve ... " may start the first line)
                if let Some(at) = line.find(REPLY)
                    && tx.send(line[at + REPLY.len()..].to_string()).is_err()
                {
                    break;
                }
            }
        });
        Worker {
            child,
            input,
            replies,
            stderr,
        }
    }

    /// Load `path` in the worker; `Err` says how the worker died (or hung).
    fn load(&mut self, path: &Path, target: &Option<String>) -> Result<Outcome, String> {
        let request = format!(
            "{}\t{}\n",
            path.display(),
            target.as_deref().unwrap_or("\u{1}")
        );
        if self
            .input
            .write_all(request.as_bytes())
            .and_then(|()| self.input.flush())
            .is_err()
        {
            return Err(self.death());
        }
        match self.replies.recv_timeout(Duration::from_secs(60)) {
            Ok(reply) => Ok(match reply.split_once(' ') {
                Some(("panic", msg)) => Outcome::Panicked(msg.to_string()),
                Some(("caught", msg)) => Outcome::RefusedAfterPanic(msg.to_string()),
                _ if reply == "loaded" => Outcome::Loaded,
                _ if reply == "checks" => Outcome::RefusedByChecks,
                _ if reply == "reader" => Outcome::RefusedByReader,
                _ => Outcome::RefusedData,
            }),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(format!("hung for 60 s; {}", self.death()))
            }
            Err(_) => Err(self.death()),
        }
    }

    /// How the worker ended, with the end of its standard error.
    fn death(&mut self) -> String {
        let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
        let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(6).collect();
        format!(
            "the worker process ended ({status}): {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where failing inputs are kept, to become regression fixtures.
fn keep_failure(bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join("sgpw-fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let name = format!(
        "parquet-{:016x}.parquet",
        bytes
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b))
                .wrapping_mul(0x100_0000_01b3))
    );
    let path = dir.join(name);
    let _ = std::fs::write(&path, bytes);
    path
}

#[test]
fn parquet_files_load_or_fail_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("train.parquet");
    let worker = std::cell::RefCell::new(Worker::start(dir.path()));
    fuzz("parquet", super::CI_CASES, parquet_case(), |c| {
        let bytes = case_bytes(&c, &path);
        std::fs::write(&path, &bytes).expect("writes");
        let outcome = worker.borrow_mut().load(&path, &c.target);
        match outcome {
            Ok(Outcome::Loaded) => reached("parquet loaded"),
            Ok(Outcome::RefusedByChecks) => reached("parquet refused by the checks"),
            Ok(Outcome::RefusedByReader) => reached("parquet refused by polars"),
            Ok(Outcome::RefusedData) => reached("parquet refused as data"),
            Ok(Outcome::RefusedAfterPanic(msg)) => {
                let kept = keep_failure(&bytes);
                panic!(
                    "a reader panicked ({msg}); the file is kept as {}",
                    kept.display()
                )
            }
            Ok(Outcome::Panicked(msg)) => {
                let kept = keep_failure(&bytes);
                panic!(
                    "sgpw panicked ({msg}); the file is kept as {}",
                    kept.display()
                )
            }
            Err(death) => {
                *worker.borrow_mut() = Worker::start(dir.path());
                let kept = keep_failure(&bytes);
                panic!("{death}; the file is kept as {}", kept.display())
            }
        }
    });
}

/// The worker: with `SGPW_FUZZ_WORKER=1` (set by [`Worker::start`]) this reads a file
/// path and target per line, loads it as the Parquet target does, and answers on
/// standard output; otherwise it returns at once (it is the worker's entry point, not
/// a test of its own).
#[test]
fn serve() {
    if std::env::var_os("SGPW_FUZZ_WORKER").is_none() {
        return;
    }
    use std::sync::atomic::{AtomicUsize, Ordering};
    static PANICS: AtomicUsize = AtomicUsize::new(0);
    static LAST: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    std::panic::set_hook(Box::new(|info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut last) = LAST.lock() {
            *last = info.to_string().replace('\n', " ");
        }
    }));
    limit_memory();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines().map_while(Result::ok) {
        let Some((path, target)) = line.split_once('\t') else {
            continue;
        };
        let path = PathBuf::from(path);
        let target = (target != "\u{1}").then(|| target.to_string());
        let before = PANICS.load(Ordering::SeqCst);
        let result = std::panic::catch_unwind(|| load_like_a_user(&path, target));
        let reply = match result {
            Err(_) => format!(
                "panic {}",
                LAST.lock().map(|s| s.clone()).unwrap_or_default()
            ),
            Ok(_) if PANICS.load(Ordering::SeqCst) > before => {
                format!(
                    "caught {}",
                    LAST.lock().map(|s| s.clone()).unwrap_or_default()
                )
            }
            Ok(Ok(())) => "loaded".into(),
            Ok(Err(e)) if e.contains("the file is damaged:") || e.contains("PAR1") => {
                "checks".into()
            }
            Ok(Err(e)) if e.contains("cannot read as Parquet") => "reader".into(),
            Ok(Err(_)) => "data".into(),
        };
        let _ = writeln!(out, "{REPLY}{reply}");
        let _ = out.flush();
    }
}

/// What a user's commands do with a Parquet file: load it as a data set (with a
/// target, if given) and read it as prediction inputs, whole and in chunks. The
/// error loading the data set, if any.
fn load_like_a_user(path: &Path, target: Option<String>) -> Result<(), String> {
    let spec = LoadSpec {
        train: path.to_path_buf(),
        target,
        ..LoadSpec::default()
    };
    let loaded = match sgpw::data::load(&spec) {
        Ok(d) => {
            check_dataset(&d);
            Ok(())
        }
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("train.parquet"), "{e}");
            Err(e)
        }
    };
    if let Ok(x) = sgpw::data::load_inputs(path, &[]) {
        assert!(x.iter().all(|v| v.is_finite()));
    }
    let _ = sgpw::data::load::for_each_input_chunk(path, &[], 7, &mut |_, x| {
        assert!(x.iter().all(|v| v.is_finite()));
        Ok(())
    });
    loaded
}

/// The worker may use 4 GB of address space: a reader that asks for more than any of
/// these small files needs fails there (and is reported) instead of slowly taking
/// the machine's memory.
fn limit_memory() {
    let limit = libc::rlimit {
        rlim_cur: 4 << 30,
        rlim_max: 4 << 30,
    };
    // SAFETY: setrlimit reads the struct it is given; it only lowers this process's limit.
    unsafe {
        libc::setrlimit(libc::RLIMIT_AS, &limit);
    }
}
