use nalgebra::DMatrix;
use sgpw::data::TrainData;
use sgpw::exec::Exec;
use sgpw::kernel::KernelKind;
use sgpw::methods::lowrank::LowRankMethod;
use sgpw::methods::method::Method;
use sgpw::methods::pseudo::*;
use sgpw::model_file::Hyper;
use sgpw::model_file::ModelFile;
use sgpw::params::ParamLayout;

/// An L-BFGS fit unpacks θ into the typed [`PseudoState`] instead of into a copy of
/// the model file: both give the same bits, for every approximation, SPGP+HS, the rq
/// kernel's shape, fixed blocks, and in one piece or in chunks.
#[test]
fn the_typed_state_evaluates_to_the_model_files_bits() {
    let (n, m) = (60, 7);
    let x = DMatrix::from_fn(n, 2, |i, k| ((i * (k + 2)) as f64 * 0.37).sin() * 2.0);
    let y = (0..n)
        .map(|i| (x[(i, 0)] + 0.5 * x[(i, 1)]).sin())
        .collect();
    let data = TrainData {
        x,
        y,
        log_exposure: None,
    };
    let cases: [(&LowRankMethod<PseudoInputs>, KernelKind, &[&str]); 6] = [
        (&FITC, KernelKind::Se, &[]),
        (
            &VFE,
            KernelKind::Matern32,
            &["lengthscales", "noise_variance"],
        ),
        (&DTC, KernelKind::Rq, &["rq_alpha"]),
        (
            &PEP,
            KernelKind::Se,
            &["signal_variance", "inducing_inputs"],
        ),
        (&SPGP_HS, KernelKind::Se, &[]),
        (&SPGP_HS, KernelKind::Matern52, &["pseudo_noise"]),
    ];
    for (method, kind, fixed) in cases {
        let mut model = ModelFile::new(
            method.name,
            Hyper::se(1.3, vec![0.8, 1.4], 0.1).with_kernel(kind),
        );
        set_inducing_points(&mut model, &data.x.rows(0, m).into_owned());
        if method.family.hetero {
            model.set(&initial_pseudo_noise(m, 1.3));
        }
        if method.name == "pep" {
            model.alpha = Some(0.5);
        }
        model.noise_floor = Some(0.01);
        model.fixed = fixed.iter().map(|f| f.to_string()).collect();
        // a point the optimiser can reach: the fixed blocks' entries at the start
        let mut theta = method.pack(&model);
        let layout = ParamLayout::new(&model, method.tail_blocks(), theta.len());
        for i in layout.free(0..theta.len()) {
            theta[i] += 0.05 * (i as f64 * 0.7).sin();
        }
        let mut typed = method.typed_fit(&model).expect("a typed state");
        typed.unpack(&theta, &layout);
        let mut file = model.clone();
        method.unpack(&theta, &mut file);
        layout.hold_fixed(&model, &mut file);
        let chunked = Exec {
            chunk_entries: 20 * m,
            ..Exec::sequential()
        };
        for exec in [Exec::sequential(), chunked] {
            let (mut g_typed, mut g_file) = (Vec::new(), Vec::new());
            let v_typed = typed
                .objective_into(&data, &exec, &mut g_typed)
                .expect("typed");
            let v_file = method
                .objective_into(&file, &data, &exec, &mut g_file)
                .expect("file");
            let what = format!("{} {kind} fixed {fixed:?}", method.name);
            assert_eq!(v_typed.0.to_bits(), v_file.0.to_bits(), "{what}");
            assert_eq!(g_typed.len(), g_file.len(), "{what}");
            for (i, (a, b)) in g_typed.iter().zip(&g_file).enumerate() {
                assert_eq!(a.to_bits(), b.to_bits(), "{what}: entry {i}: {a} {b}");
            }
        }
    }
}
