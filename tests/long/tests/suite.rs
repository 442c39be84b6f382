//! The long horizons of the workspace (10⁵–10⁶ steps each), compiled as one
//! test binary at opt-level 2 (the workspace Cargo.toml, README "Build
//! time"). Each run instantiates its stepper in this package, so the generic
//! part of the step (dual numbers, the Lagrangian's derivatives, the impact
//! checks) is optimised here while the short tests elsewhere compile at
//! opt-level 0 or 1; Newton's iteration and the LU solves are the
//! discrete-dirac library's, also at opt-level 2. A new file of tests must
//! be added below (`every_test_file_is_a_module`, tests/tests/suite.rs).

mod long_horizons;
mod long_ladder;
mod long_run_energy;
