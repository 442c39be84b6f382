//! Run the ball in the bowl of `diracvi-example-own-model` and print the
//! summary as `diracvi run --summary json` prints it; with an argument
//! `OUT.csv`, also write the trajectory there, the impacts to
//! `OUT.impacts.csv`, in the CLI's formats, the figure of `--plot` to
//! `OUT.svg`, the animation of `--animate` to `OUT.animation.svg` and a
//! poster of six frames to `OUT.poster.png`.
//!
//! ```text
//! cargo run -p diracvi-example-own-model -- bowl.csv
//! ```

use diracvi_example_own_model::{Bowl, run, run_with_pictures};
use diracvi_run::{
    Discard, RecordSink, RunPlan, TrajectoryFormat, TrajectoryWriter, step_count_for,
    write_impacts_csv,
};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    match main_inner() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main_inner() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let bowl = Bowl::default();
    let setup = bowl.default_setup();
    let steps = step_count_for(setup.h, setup.t_end, None)?;
    let out = std::env::args_os().nth(1).map(PathBuf::from);
    let coordinates = ["x".to_string(), "y".to_string()];
    let mut writer = out
        .as_ref()
        .map(|path| {
            File::create(path).map(|f| {
                TrajectoryWriter::new(
                    BufWriter::new(f),
                    TrajectoryFormat::Csv,
                    "bowl",
                    &coordinates,
                )
            })
        })
        .transpose()?;
    let sink: &mut dyn RecordSink = match writer.as_mut() {
        Some(w) => w,
        None => &mut Discard,
    };
    let plan = RunPlan::new(steps).every(if out.is_some() { 1 } else { 0 });
    let (summary, outcome, pictures) = match out {
        Some(_) => {
            let (summary, outcome, pictures) = run_with_pictures(&bowl, &setup, plan, sink, None)?;
            (summary, outcome, Some(pictures))
        }
        None => {
            let (summary, outcome) = run(&bowl, &setup, plan, sink)?;
            (summary, outcome, None)
        }
    };
    if let (Some(w), Some(path)) = (writer, out.as_ref()) {
        w.finish(&outcome.impacts)?;
        if let Some(pictures) = pictures {
            std::fs::write(path.with_extension("svg"), pictures.plot)?;
            std::fs::write(path.with_extension("animation.svg"), pictures.animation.svg)?;
            if let Some(png) = pictures.animation.poster {
                std::fs::write(path.with_extension("poster.png"), png)?;
            }
        }
        let mut impacts = BufWriter::new(File::create(path.with_extension("impacts.csv"))?);
        write_impacts_csv(&mut impacts, &coordinates, &outcome.impacts)?;
        impacts.flush()?;
    }
    println!("{}", serde_json::to_string_pretty(&summary)?);
    Ok(())
}
