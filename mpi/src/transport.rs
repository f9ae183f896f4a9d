//! The processes of an MPI job and what passes between them: MPI's start, the
//! collectives every process joins (sums, minima and maxima, counts, broadcasts from
//! the root, the rows gathered on it), the root's announcements of each evaluation and
//! the others' serving loop ([`MpiShare::serve`]), the core's [`RowShare`], and the
//! bytes each kind of traffic took ([`Traffic`]).

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use sgpw::data::TrainData;
use sgpw::distributed::Traffic;
use sgpw::error::{Error, Result};
use sgpw::exec::{Evaluation, Exec, RowShare};
use sgpw::methods;
use sgpw::model_file::ModelFile;
use std::any::Any;
use std::sync::{Arc, Mutex};

/// MPI, initialised for this program; finalised when dropped.
pub struct Processes {
    _universe: mpi::environment::Universe,
    pub share: Arc<MpiShare>,
}

/// Initialise MPI (once per program).
pub fn start() -> Result<Processes> {
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or_else(|| Error::input("--distributed: MPI was already initialised"))?;
    let world = universe.world();
    let share = MpiShare {
        rank: world.rank() as usize,
        size: world.size() as usize,
        base: Mutex::new(None),
        traffic: Mutex::new(Traffic::default()),
    };
    Ok(Processes {
        _universe: universe,
        share: Arc::new(share),
    })
}

/// The processes of `MPI_COMM_WORLD` as the core's [`RowShare`]. MPI is called from
/// the thread that initialised it only (the fit runs on the main thread; the core
/// adds its sums outside its parallel loops).
#[derive(Debug)]
pub struct MpiShare {
    pub rank: usize,
    pub size: usize,
    /// The model the others hold, which an announced parameter vector is unpacked
    /// into (on the root: the last model it broadcast whole).
    base: Mutex<Option<ModelFile>>,
    traffic: Mutex<Traffic>,
}

/// What an announcement's header says.
const STOP: f64 = 0.0;
const PACKED: f64 = 0.0;
const WHOLE: f64 = 1.0;

fn code(what: Evaluation) -> f64 {
    match what {
        Evaluation::Gradient => 1.0,
        Evaluation::Value => 2.0,
        Evaluation::Posterior => 3.0,
    }
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

impl MpiShare {
    pub fn traffic(&self) -> Traffic {
        self.traffic.lock().map(|t| *t).unwrap_or_default()
    }

    fn count(&self, f: impl FnOnce(&mut Traffic)) {
        if let Ok(mut t) = self.traffic.lock() {
            f(&mut t);
        }
    }

    /// Entrywise sum over every process, in place.
    pub fn sum(&self, buf: &mut [f64]) {
        let send = buf.to_vec();
        world().all_reduce_into(&send[..], buf, SystemOperation::sum());
    }

    /// Entrywise minimum and maximum over every process, in place.
    pub fn min_max(&self, low: &mut [f64], high: &mut [f64]) {
        let send = low.to_vec();
        world().all_reduce_into(&send[..], low, SystemOperation::min());
        let send = high.to_vec();
        world().all_reduce_into(&send[..], high, SystemOperation::max());
    }

    /// Every process's count in process order, from each its own (None: it failed);
    /// None if any failed.
    pub fn counts(&self, mine: Option<usize>) -> Option<Vec<usize>> {
        let send = [u64::from(mine.is_some()), mine.unwrap_or(0) as u64];
        let mut all = vec![0u64; 2 * self.size];
        world().all_gather_into(&send[..], &mut all[..]);
        let all: Vec<[u64; 2]> = all.chunks(2).map(|c| [c[0], c[1]]).collect();
        all.iter()
            .all(|[ok, _]| *ok == 1)
            .then(|| all.iter().map(|[_, n]| *n as usize).collect())
    }

    /// The root's `values` on every process (the others' own are ignored).
    pub fn broadcast_values(&self, mut values: Vec<f64>) -> Vec<f64> {
        let root = world();
        let root = root.process_at_rank(0);
        let mut len = [values.len() as f64];
        root.broadcast_into(&mut len[..]);
        values.resize(len[0] as usize, 0.0);
        root.broadcast_into(&mut values[..]);
        values
    }

    /// Every process's `mine` (each of the same length), in process order.
    pub fn all_gather(&self, mine: &[f64]) -> Vec<f64> {
        let mut all = vec![0.0; mine.len() * self.size];
        world().all_gather_into(mine, &mut all[..]);
        all
    }

    /// On the root, its `mine` followed by every other process's in process order;
    /// None on the others.
    pub fn gather_on_root(&self, mut mine: Vec<f64>) -> Option<Vec<f64>> {
        let w = world();
        if self.rank != 0 {
            w.process_at_rank(0).send(&mine[..]);
            return None;
        }
        for r in 1..self.size {
            let (part, _) = w.process_at_rank(r as i32).receive_vec::<f64>();
            mine.extend(part);
        }
        Some(mine)
    }

    /// Tell the others that no more evaluations follow (root).
    pub fn stop(&self) {
        let mut header = [STOP, PACKED, 0.0];
        world().process_at_rank(0).broadcast_into(&mut header[..]);
    }

    /// On every process but the root: evaluate what the root announces, on this
    /// process's rows, until it says stop. An evaluation that fails here has told the
    /// others through its sums (the root reports it).
    pub fn serve(&self, data: &TrainData, exec: &Exec) -> Result<()> {
        let root = world();
        let root = root.process_at_rank(0);
        let mut grad = Vec::new();
        loop {
            let mut header = [0.0; 3];
            root.broadcast_into(&mut header[..]);
            if header[0] == STOP {
                return Ok(());
            }
            let len = header[2] as usize;
            let model = if header[1] == WHOLE {
                let mut bytes = vec![0u8; len];
                root.broadcast_into(&mut bytes[..]);
                let model = model_of_bytes(bytes)?;
                self.set_base(model.clone());
                model
            } else {
                let mut theta = vec![0.0; len];
                root.broadcast_into(&mut theta[..]);
                let mut model = self
                    .base
                    .lock()
                    .ok()
                    .and_then(|b| b.clone())
                    .ok_or_else(|| Error::input("--distributed: parameters before a model"))?;
                methods::get(&model.method)?.unpack(&theta, &mut model);
                model
            };
            self.count(|t| t.evaluations += 1);
            let method = methods::get(&model.method)?;
            let what = header[0];
            let _ = if what == code(Evaluation::Gradient) {
                method
                    .objective_into(&model, data, exec, &mut grad)
                    .map(|_| ())
            } else if what == code(Evaluation::Value) {
                method.nlml(&model, data, exec).map(|_| ())
            } else {
                method.posterior(&model, data, exec).map(|_| ())
            };
        }
    }

    /// The root's `start` on every process (the root passes Some, the others None):
    /// the model as TOML, which reads back to the same bits. When the root could not
    /// compute it, every process gets an error.
    pub fn broadcast_model(&self, start: Option<Result<ModelFile>>) -> Result<ModelFile> {
        let root = world();
        let root = root.process_at_rank(0);
        let Some(start) = start else {
            let mut len = [0u64];
            root.broadcast_into(&mut len[..]);
            if len[0] == 0 {
                return Err(Error::input(
                    "--distributed: the root (rank 0) could not compute the start (its error \
                     is reported)",
                ));
            }
            let mut bytes = vec![0u8; len[0] as usize];
            root.broadcast_into(&mut bytes[..]);
            let model = model_of_bytes(bytes)?;
            self.set_base(model.clone());
            return Ok(model);
        };
        let bytes = start.and_then(|model| model_bytes(&model).map(|b| (model, b)));
        let mut len = [bytes.as_ref().map_or(0, |(_, b)| b.len() as u64)];
        root.broadcast_into(&mut len[..]);
        let (model, mut bytes) = bytes?;
        root.broadcast_into(&mut bytes[..]);
        self.set_base(model.clone());
        self.count(|t| t.announced += 8 + bytes.len());
        Ok(model)
    }

    fn set_base(&self, model: ModelFile) {
        if let Ok(mut b) = self.base.lock() {
            *b = Some(model);
        }
    }
}

impl RowShare for MpiShare {
    fn all_sum(&self, buf: &mut [f64]) -> Result<()> {
        self.sum(buf);
        let bytes = std::mem::size_of_val(buf);
        self.count(|t| {
            t.summed += bytes;
            if buf.len() <= 2 {
                t.values += bytes;
            }
            // a gradient pass's sums follow its first pass's in each evaluation
            if t.first_pass == 0 || t.first_pass == bytes {
                t.first_pass = bytes;
            } else {
                t.second_pass = bytes;
            }
        });
        Ok(())
    }

    fn is_root(&self) -> bool {
        self.rank == 0
    }

    fn announce(&self, what: Evaluation, model: &dyn Any) -> Result<()> {
        let model = model
            .downcast_ref::<ModelFile>()
            .ok_or_else(|| Error::input("internal: an announcement without a model"))?;
        let method = methods::get(&model.method)?;
        let mut theta = method.pack(model);
        // the packed vector where the others' model unpacks it to this one bit for
        // bit; the whole model where its tables changed (a stage, a first evaluation)
        let same = self
            .base
            .lock()
            .ok()
            .and_then(|b| b.clone())
            .is_some_and(|mut b| {
                method.unpack(&theta, &mut b);
                b == *model
            });
        let root = world();
        let root = root.process_at_rank(0);
        let bytes = if same {
            let mut header = [code(what), PACKED, theta.len() as f64];
            root.broadcast_into(&mut header[..]);
            root.broadcast_into(&mut theta[..]);
            24 + 8 * theta.len()
        } else {
            let mut bytes = model_bytes(model)?;
            let mut header = [code(what), WHOLE, bytes.len() as f64];
            root.broadcast_into(&mut header[..]);
            root.broadcast_into(&mut bytes[..]);
            self.set_base(model.clone());
            24 + bytes.len()
        };
        self.count(|t| {
            t.evaluations += 1;
            t.announced += bytes;
        });
        Ok(())
    }
}

/// A model as the TOML the other processes are given, checked to read back to the
/// same bits.
fn model_bytes(model: &ModelFile) -> Result<Vec<u8>> {
    let text = model.to_toml()?;
    if ModelFile::parse(&text).ok().as_ref() != Some(model) {
        return Err(Error::numerical(
            "--distributed: the model does not read back from its TOML bit for bit, \
             so the other processes cannot be given it",
        ));
    }
    Ok(text.into_bytes())
}

/// The model [`model_bytes`] sent.
fn model_of_bytes(bytes: Vec<u8>) -> Result<ModelFile> {
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::input("--distributed: a model arrived damaged"))?;
    ModelFile::parse(&text).map_err(Error::input)
}
