//! The balance lab: plays many all-bot games of the Stammtisch rules on all cores,
//! reproducibly from a seed, and writes a report (HTML with SVG charts, CSV, JSON).
//!
//! - [`study`]: what to play and the parallel run;
//! - [`play`]: one game and what is recorded of it;
//! - [`summary`]: the numbers of a configuration, with 95 % confidence intervals;
//! - [`report`]: the files; [`svg`]: the charts;
//! - [`cli`]: `stammtisch simulate`, which the server binary exposes.
//!
//! The lab only uses the rules crate's public API (the same `decide`/`apply` and bots the
//! server runs); it never touches a database or the network.

pub mod cli;
pub mod play;
pub mod report;
pub mod study;
pub mod summary;
pub mod svg;
pub mod variant;

pub use cli::SimulateArgs;
pub use study::{Lineup, Results, Study};
pub use variant::Variant;
