//! The Rust model of this crate, run through `diracvi-run`'s public API,
//! against `diracvi run --model-file bowl.toml` (the same model as a model
//! file): the same JSON summary (but for the wall time and the CLI's file
//! names), the same trajectory CSV and the same impacts CSV, string for
//! string; and an ensemble of bowls against its members run one by one.
//!
//! The `diracvi` binary is `$DIRACVI_CLI` if set, else the one beside this
//! test's executable (`target/<profile>/diracvi`), which `cargo test
//! --workspace` builds; alone, this test needs `cargo build -p diracvi-cli`
//! first.

use diracvi_example_own_model::{Bowl, ensemble, run, run_to_tolerance};
use diracvi_run::{
    Discard, EnsembleOptions, RecordBuffer, RunPlan, TrajectoryFormat, TrajectoryWriter,
    step_count_for, write_impacts_csv,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn cli() -> PathBuf {
    if let Some(path) = std::env::var_os("DIRACVI_CLI") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test> -> target/<profile>/diracvi
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join(format!("diracvi{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "no diracvi binary at {}: run `cargo build -p diracvi-cli` (or the whole workspace's tests), or set DIRACVI_CLI",
        bin.display()
    );
    bin
}

fn toml() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bowl.toml")
}

/// The JSON text of a summary without what differs between two runs of
/// one computation (the wall time) and the CLI's names of its output files
/// (`out`, `plot`, `animate`, after the summary's keys). Compared as text:
/// a parsed `serde_json::Value` need not hold the printed numbers exactly.
fn comparable(json: &str) -> String {
    let mut text = json.trim().to_owned();
    if let Some(at) = text.find(",\"out\":") {
        text.truncate(at);
        text.push('}');
    }
    assert!(text.contains(",\"wall_time_s\":"), "a wall time");
    without(&text, ",\"wall_time_s\":")
}

/// `text` without the JSON number after `key` (and `key` itself).
fn without(text: &str, key: &str) -> String {
    let mut text = text.to_owned();
    if let Some(start) = text.find(key) {
        let end = text[start + key.len()..]
            .find([',', '}'])
            .map(|i| start + key.len() + i)
            .unwrap();
        text.replace_range(start..end, "");
    }
    text
}

/// `diracvi run --model-file bowl.toml ARGS PATH`, which must succeed; its
/// standard output.
fn run_cli(args: &[&str], path: &Path) -> String {
    let out = Command::new(cli())
        .arg("run")
        .arg("--model-file")
        .arg(toml())
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_rust_model_gives_the_cli_summary_and_files_of_its_model_file() {
    let dir = tempfile::tempdir().unwrap();
    let cli_csv = dir.path().join("cli.csv");
    let cli_summary = run_cli(&["--summary", "json", "--out"], &cli_csv);
    let parsed: Value = serde_json::from_str(&cli_summary).unwrap();
    assert_eq!(parsed["out"], cli_csv.display().to_string());

    // The same run through the public API, written with the CLI's writers.
    let bowl = Bowl::default();
    let setup = bowl.default_setup();
    let steps = step_count_for(setup.h, setup.t_end, None).unwrap();
    let api_csv = dir.path().join("api.csv");
    let coordinates = ["x".to_string(), "y".to_string()];
    let mut writer = TrajectoryWriter::new(
        std::io::BufWriter::new(std::fs::File::create(&api_csv).unwrap()),
        TrajectoryFormat::Csv,
        "bowl",
        &coordinates,
    );
    let (summary, outcome) = run(&bowl, &setup, RunPlan::new(steps).every(1), &mut writer).unwrap();
    writer.finish(&outcome.impacts).unwrap();
    let mut impacts = Vec::new();
    write_impacts_csv(&mut impacts, &coordinates, &outcome.impacts).unwrap();
    let api_summary = serde_json::to_string(&summary).unwrap();

    // The numbers are those of a real run: 3000 steps, several impacts, the
    // discrete energy within 2e-5 of the continuous E = ½ |v0|² = 1.25 J
    // (it is 1.249988: an O(h) offset of the discrete energy) and kept to
    // 1e-3 of its scale.
    assert_eq!(summary.steps, 3000);
    assert!(summary.impacts >= 3, "{} impacts", summary.impacts);
    assert!(
        (summary.energy.initial - 1.25).abs() < 2e-5,
        "{}",
        summary.energy.initial
    );
    assert!(summary.energy.max_relative_deviation < 1e-3);
    assert_eq!(summary.method.core, "compile-time");
    for q in outcome.final_q.chunks(2) {
        assert!(
            q[0] * q[0] + q[1] * q[1] <= 1.0 + 1e-12,
            "outside the bowl: {q:?}"
        );
    }

    // Identical to the CLI's, bit for bit.
    assert_eq!(comparable(&api_summary), comparable(&cli_summary));
    assert!(!comparable(&api_summary).contains("wall_time_s"));
    assert_eq!(read(&api_csv), read(&cli_csv));
    assert_eq!(
        String::from_utf8(impacts).unwrap(),
        read(&dir.path().join("cli.impacts.csv"))
    );
}

#[test]
fn bad_initial_data_is_refused_naming_the_wall() {
    let bowl = Bowl::default();
    let mut setup = bowl.default_setup();
    setup.q0[0] = 2.0;
    let e = run(&bowl, &setup, RunPlan::new(1), &mut diracvi_run::Discard).unwrap_err();
    let message = e.to_string();
    assert!(
        message.contains("the bowl's wall R^2 - x^2 - y^2 >= 0"),
        "{message}"
    );
}

#[test]
fn an_ensemble_of_bowls_equals_its_members_run_one_by_one() {
    // Parameter variations (the radius) and initial-state variations (the
    // velocity), one second each: 1000 steps with impacts.
    let members: Vec<(Bowl, diracvi_run::DynRunSetup)> = (0..5)
        .map(|k| {
            let bowl = Bowl {
                r: 0.6 + 0.1 * k as f64,
                ..Bowl::default()
            };
            let mut setup = bowl.default_setup();
            setup.t_end = 1.0;
            setup.v0[0] = 1.0 + 0.25 * k as f64;
            (bowl, setup)
        })
        .collect();
    // One member with bad initial data: its error, the others unharmed.
    let mut bad = members[0].clone();
    bad.1.q0[0] = 2.0;
    let mut all = members.clone();
    all.insert(2, bad);
    let plan = RunPlan::new(1000).every(10);
    let options = EnsembleOptions {
        threads: 3,
        keep_trajectory: true,
        ..EnsembleOptions::default()
    };
    let runs = ensemble(&all, &plan, options);
    assert_eq!(runs.len(), 6);
    let message = runs[2].as_ref().unwrap_err().to_string();
    assert!(message.contains("the bowl's wall"), "{message}");
    let mut impacts = Vec::new();
    for (k, (member, got)) in all.iter().zip(&runs).enumerate() {
        if k == 2 {
            continue;
        }
        let got = got.as_ref().unwrap();
        let mut records = RecordBuffer::new();
        let (mut summary, mut outcome) =
            run(&member.0, &member.1, plan.clone(), &mut records).unwrap();
        // Bit for bit but the wall time: the summaries as JSON text (the
        // shortest round-trip form of every number), the outcomes and the
        // records field by field, the final state by its bits.
        let mut got_summary = got.summary.clone();
        got_summary.wall_time_s = 0.0;
        summary.wall_time_s = 0.0;
        assert_eq!(
            serde_json::to_string(&got_summary).unwrap(),
            serde_json::to_string(&summary).unwrap(),
            "member {k}"
        );
        let mut got_outcome = got.outcome.clone();
        got_outcome.wall_time = std::time::Duration::ZERO;
        outcome.wall_time = std::time::Duration::ZERO;
        assert_eq!(got_outcome, outcome, "member {k}");
        let bits = |q: &[f64]| q.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&got.outcome.final_q),
            bits(&outcome.final_q),
            "member {k}"
        );
        assert_eq!(got.records.as_ref(), Some(&records), "member {k}");
        assert_eq!(
            records.t.len(),
            101,
            "member {k}: every 10th step and the first"
        );
        impacts.push(summary.impacts);
    }
    // The members differ: a real ensemble, with impacts.
    assert!(impacts.iter().all(|&n| n >= 1), "{impacts:?}");
    let finals: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|r| r.outcome.final_q[0])
        .collect();
    for pair in finals.windows(2) {
        assert!((pair[0] - pair[1]).abs() > 1e-6, "{finals:?}");
    }
    // Without trajectories nothing is kept, and the outcome is the same.
    let lean = ensemble(&members[..1], &plan, EnsembleOptions::default());
    let lean = lean[0].as_ref().unwrap();
    assert!(lean.records.is_none());
    let (_, mut alone) = run(&members[0].0, &members[0].1, plan.clone(), &mut Discard).unwrap();
    let mut lean_outcome = lean.outcome.clone();
    lean_outcome.wall_time = std::time::Duration::ZERO;
    alone.wall_time = std::time::Duration::ZERO;
    assert_eq!(lean_outcome, alone);
}

/// The `--plot` figure through `diracvi-plot`: with the same panels, the
/// one the command line draws for `bowl.toml`, byte for byte; by default
/// the x–y panel too, with the bowl's rim as its wall. The `--animate`
/// picture of the bowl's own drawing: its frames, the rim, the impacts,
/// and a PNG poster.
#[test]
fn a_rust_model_draws_the_cli_plot_of_its_model_file() {
    use diracvi_example_own_model::run_with_pictures;
    use diracvi_plot::PlotPanel;
    let dir = tempfile::tempdir().unwrap();
    let cli_svg = dir.path().join("cli.svg");
    run_cli(
        &[
            "--quiet",
            "--plot-panels",
            "energy,coords,momenta",
            "--plot",
        ],
        &cli_svg,
    );
    let bowl = Bowl::default();
    let setup = bowl.default_setup();
    let steps = step_count_for(setup.h, setup.t_end, None).unwrap();
    let panels = [PlotPanel::Energy, PlotPanel::Coords, PlotPanel::Momenta];
    let (_, _, pictures) = run_with_pictures(
        &bowl,
        &setup,
        RunPlan::new(steps),
        &mut Discard,
        Some(&panels),
    )
    .unwrap();
    let cli = read(&cli_svg);
    assert!(cli.contains("momentum p_y"), "a real figure");
    assert_eq!(pictures.plot, cli);

    // The default panels: energy, coordinates and the path with the rim.
    let (_, outcome, pictures) =
        run_with_pictures(&bowl, &setup, RunPlan::new(steps), &mut Discard, None).unwrap();
    assert!(!outcome.impacts.is_empty());
    for needle in [
        "bowl: 3000 steps",
        "coordinate x",
        "coordinate y",
        "path in the x–y plane, walls in brown",
    ] {
        assert!(
            pictures.plot.contains(needle),
            "{needle:?} not in the figure"
        );
    }
    // The animation: the model's name, a SMIL animation of the ball, the
    // rim (a circle of radius 1 m), a mark per impact; a PNG poster.
    let svg = &pictures.animation.svg;
    assert!(svg.contains("bowl"), "the model's name");
    assert!(svg.contains("<animate"), "an animation");
    assert!(svg.contains("<circle"), "the rim and the ball");
    let marks = svg.matches("#d62728").count();
    assert!(
        marks >= outcome.impacts.len(),
        "{marks} impact marks for {} impacts",
        outcome.impacts.len()
    );
    let png = pictures.animation.poster.as_deref().unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    // and the bowl has no constraint residual to draw
    let err = run_with_pictures(
        &bowl,
        &setup,
        RunPlan::new(steps),
        &mut Discard,
        Some(&[PlotPanel::Residual]),
    )
    .unwrap_err();
    assert!(err.to_string().contains("no constraints"), "{err}");
}

/// `text` without the pilots' wall time (`"pilot_wall_time_s":…`), which
/// differs between two runs of one computation.
fn without_pilot_time(text: &str) -> String {
    without(text, "\"pilot_wall_time_s\":")
}

#[test]
fn a_rust_model_chooses_the_cli_order_and_step_for_a_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let cli_csv = dir.path().join("cli.csv");
    let cli_summary = run_cli(&["--tol", "1e-7", "--summary", "json", "--out"], &cli_csv);

    let bowl = Bowl::default();
    let setup = bowl.default_setup();
    let api_csv = dir.path().join("api.csv");
    let coordinates = ["x".to_string(), "y".to_string()];
    let mut writer = TrajectoryWriter::new(
        std::io::BufWriter::new(std::fs::File::create(&api_csv).unwrap()),
        TrajectoryFormat::Csv,
        "bowl",
        &coordinates,
    );
    let (summary, outcome) =
        run_to_tolerance(&bowl, &setup, RunPlan::new(0).every(1), 1e-7, &mut writer).unwrap();
    writer.finish(&outcome.impacts).unwrap();

    // A real choice: pilots ran, the estimate meets the tolerance, and the
    // step is not the file's own.
    let t = summary.tolerance.as_ref().expect("the choice is recorded");
    assert_eq!(t.requested.to_bits(), 1e-7_f64.to_bits());
    assert!(t.pilot_runs >= 3, "{} pilots", t.pilot_runs);
    assert!(t.error_estimate <= 1e-7, "estimate {:e}", t.error_estimate);
    assert_eq!(summary.steps, t.chosen_steps);
    assert!((summary.h - setup.h).abs() > 1e-9, "h = {}", summary.h);
    assert!(summary.impacts >= 3);

    // The command line's choice and run, bit for bit.
    let api_summary = serde_json::to_string(&summary).unwrap();
    assert_eq!(
        without_pilot_time(&comparable(&api_summary)),
        without_pilot_time(&comparable(&cli_summary))
    );
    assert_eq!(read(&api_csv), read(&cli_csv));
}
