//! The Rust model of this crate, run through `diracvi-run`'s public API,
//! against `diracvi run --model-file bowl.toml` (the same model as a model
//! file): the same JSON summary (but for the wall time and the CLI's file
//! names), the same trajectory CSV and the same impacts CSV, string for
//! string.
//!
//! The `diracvi` binary is `$DIRACVI_CLI` if set, else the one beside this
//! test's executable (`target/<profile>/diracvi`), which `cargo test
//! --workspace` builds; alone, this test needs `cargo build -p diracvi-cli`
//! first.

use diracvi_example_own_model::{Bowl, run};
use diracvi_run::{RunPlan, TrajectoryFormat, TrajectoryWriter, step_count_for, write_impacts_csv};
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
    let key = ",\"wall_time_s\":";
    let start = text.find(key).expect("a wall time");
    let end = text[start + key.len()..]
        .find([',', '}'])
        .map(|i| start + key.len() + i)
        .unwrap();
    text.replace_range(start..end, "");
    text
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_rust_model_gives_the_cli_summary_and_files_of_its_model_file() {
    let dir = tempfile::tempdir().unwrap();
    let cli_csv = dir.path().join("cli.csv");
    let out = Command::new(cli())
        .arg("run")
        .arg("--model-file")
        .arg(toml())
        .args(["--summary", "json", "--out"])
        .arg(&cli_csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli_summary = String::from_utf8(out.stdout).unwrap();
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
